// SPDX-License-Identifier: MIT
/*
 * A study's time series as an SVG image, written by hand: a panel of each
 * plotted flow's throughput against virtual time and a panel of the
 * sources' CCTI, so a run with congestion control and one without can be
 * told apart at a glance. Contributors are drawn in warm colours, victims
 * in cold ones; every line is one <polyline> whose class and data-*
 * attributes name its role and flow, for programs that read the image.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "traffic_int.h"

/* Layout, in SVG user units (pixels). */
#define W	  960.0
#define LEFT	  70.0
#define PLOT_W	  600.0
#define LEGEND_X  (LEFT + PLOT_W + 30.0)
#define TOP	  60.0
#define TPUT_H	  300.0
#define GAP	  70.0
#define CCTI_H	  160.0
#define LINE_H	  13.0
#define MAX_OTHER 16 /* flows plotted for patterns without roles */

struct plot {
	const struct ibemu_traffic *tr;
	const struct ibemu_traffic_series *s;
	uint32_t *cols; /* the plotted columns, in legend order */
	uint32_t n;
	double t_end_us;
};

static void xml_text(struct ibemu_buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			ibemu_buf_puts(b, "&amp;");
			break;
		case '<':
			ibemu_buf_puts(b, "&lt;");
			break;
		case '>':
			ibemu_buf_puts(b, "&gt;");
			break;
		case '"':
			ibemu_buf_puts(b, "&quot;");
			break;
		default:
			/* Control bytes are not allowed in XML 1.0. */
			ibemu_buf_append(b, (unsigned char)*s < 0x20 ? "?" : s,
					 1);
		}
	}
}

static void host_name(struct ibemu_buf *b, const struct ibemu_traffic *tr,
		      uint32_t h)
{
	xml_text(b, tr->topo->nodes[tr->hosts[h].node].name);
	ibemu_buf_printf(b, ":%u", tr->hosts[h].port);
}

static uint64_t col_bytes(const struct ibemu_traffic_series *s, uint32_t c)
{
	uint64_t sum = 0;
	uint32_t b;

	for (b = 0; b < s->nbins; b++)
		sum += s->bytes[(size_t)b * s->cap_cols + c];
	return sum;
}

static const struct plot *sort_plot;

/* Legend order: contributors, victims, others; then by (src, dst). For
 * patterns without roles, busiest first. */
static int cmp_col(const void *a, const void *b)
{
	const struct plot *p = sort_plot;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct ibemu_traffic_flow *fx = &p->tr->flows[p->s->col_flow[x]];
	const struct ibemu_traffic_flow *fy = &p->tr->flows[p->s->col_flow[y]];
	enum ibemu_traffic_role rx =
		ibemu__traffic_role(p->tr, p->s->col_flow[x]);
	enum ibemu_traffic_role ry =
		ibemu__traffic_role(p->tr, p->s->col_flow[y]);

	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (rx == IBEMU_TRAFFIC_OTHER) {
		uint64_t bx = col_bytes(p->s, x), by = col_bytes(p->s, y);

		if (bx != by)
			return bx > by ? -1 : 1;
	}
	if (fx->src != fy->src)
		return fx->src < fy->src ? -1 : 1;
	return fx->dst < fy->dst ? -1 : fx->dst > fy->dst;
}

static int pick_cols(struct plot *p)
{
	uint32_t c;

	p->cols = malloc((p->s->ncols + 1) * sizeof(*p->cols));
	if (!p->cols)
		return -ENOMEM;
	for (c = 0; c < p->s->ncols; c++)
		p->cols[c] = c;
	sort_plot = p;
	qsort(p->cols, p->s->ncols, sizeof(*p->cols), cmp_col);
	sort_plot = NULL;
	p->n = p->s->ncols;
	if (!ibemu__traffic_has_roles(p->tr) && p->n > MAX_OTHER)
		p->n = MAX_OTHER;
	return 0;
}

/* A step of 1, 2 or 5 times a power of ten giving about 5 ticks. */
static double nice_step(double max)
{
	double raw = max / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* Flow k of n of a role: hues within the role's family, lightness
 * alternating so neighbours differ. */
static void colour(struct ibemu_buf *b, enum ibemu_traffic_role role,
		   uint32_t k, uint32_t n)
{
	double span = n > 1 ? (double)k / (double)(n - 1) : 0.5;
	unsigned light = 35 + (k % 3) * 12;

	switch (role) {
	case IBEMU_TRAFFIC_CONTRIBUTOR: /* reds to oranges */
		ibemu_buf_printf(b, "hsl(%.0f,85%%,%u%%)", span * 45, light);
		break;
	case IBEMU_TRAFFIC_VICTIM: /* blues to teals */
		ibemu_buf_printf(b, "hsl(%.0f,80%%,%u%%)", 230 - span * 50,
				 light);
		break;
	default: /* greens to purples */
		ibemu_buf_printf(b, "hsl(%.0f,60%%,%u%%)", 100 + span * 180,
				 light);
	}
}

static void axes(struct ibemu_buf *b, const struct plot *p, double top,
		 double h, double ymax, const char *ylabel)
{
	double step = nice_step(p->t_end_us), v, x, y;

	ibemu_buf_printf(b,
			 "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			 "height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
			 LEFT, top, PLOT_W, h);
	for (v = 0; v <= p->t_end_us * (1 + 1e-9); v += step) {
		x = LEFT + v / p->t_end_us * PLOT_W;
		ibemu_buf_printf(b,
				 "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" "
				 "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>"
				 "<text x=\"%.1f\" y=\"%.1f\" "
				 "text-anchor=\"middle\">%g</text>\n",
				 x, top + h, x, top + h + 5, x, top + h + 18,
				 v);
	}
	ibemu_buf_printf(b,
			 "<text x=\"%.1f\" y=\"%.1f\" "
			 "text-anchor=\"middle\">virtual time (us)</text>\n",
			 LEFT + PLOT_W / 2, top + h + 34);
	step = nice_step(ymax);
	for (v = 0; v <= ymax * (1 + 1e-9); v += step) {
		y = top + h - v / ymax * h;
		ibemu_buf_printf(b,
				 "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" "
				 "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>"
				 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				 "y2=\"%.1f\" stroke=\"#ddd\"/>"
				 "<text x=\"%.1f\" y=\"%.1f\" "
				 "text-anchor=\"end\">%g</text>\n",
				 LEFT - 5, y, LEFT, y, LEFT, y, LEFT + PLOT_W,
				 y, LEFT - 8, y + 4, v);
	}
	ibemu_buf_printf(b,
			 "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" "
			 "text-anchor=\"middle\">%s</text>\n",
			 LEFT - 48, top + h / 2, ylabel);
}

static void series_attrs(struct ibemu_buf *b, const struct plot *p, uint32_t i,
			 const char *what, uint32_t k, uint32_t n)
{
	const struct ibemu_traffic_flow *f =
		&p->tr->flows[p->s->col_flow[p->cols[i]]];
	enum ibemu_traffic_role role =
		ibemu__traffic_role(p->tr, p->s->col_flow[p->cols[i]]);
	const char *name = ibemu_traffic_role_name(role);

	ibemu_buf_printf(b, "<polyline class=\"%s %s\" data-role=\"%s\" ", what,
			 name, name);
	ibemu_buf_puts(b, "data-flow=\"");
	host_name(b, p->tr, f->src);
	ibemu_buf_puts(b, "-&gt;");
	host_name(b, p->tr, f->dst);
	ibemu_buf_puts(b, "\" fill=\"none\" stroke-width=\"1.5\" stroke=\"");
	colour(b, role, k, n);
	ibemu_buf_puts(b, "\" points=\"");
}

/* Position of flow i within its role, and the role's count. */
static void rank_in_role(const struct plot *p, uint32_t i, uint32_t *k,
			 uint32_t *n)
{
	enum ibemu_traffic_role role =
		ibemu__traffic_role(p->tr, p->s->col_flow[p->cols[i]]);
	uint32_t j;

	*k = *n = 0;
	for (j = 0; j < p->n; j++) {
		if (ibemu__traffic_role(p->tr, p->s->col_flow[p->cols[j]]) !=
		    role)
			continue;
		*k += j < i;
		(*n)++;
	}
}

/* Whether a plotted flow draws a CCTI line: the contributors, or every
 * flow of a pattern without roles. */
static int shows_ccti(const struct plot *p, uint32_t i)
{
	enum ibemu_traffic_role role =
		ibemu__traffic_role(p->tr, p->s->col_flow[p->cols[i]]);

	return role != IBEMU_TRAFFIC_VICTIM;
}

static void panels(struct ibemu_buf *b, const struct plot *p)
{
	const struct ibemu_traffic_series *s = p->s;
	double bin_us = (double)s->bin_ps / 1e6, gmax = 1, cmax = 1, v, top;
	double to_gbps = 8.0 * 1000.0 / (double)s->bin_ps;
	uint32_t i, bi, k, n;

	for (i = 0; i < p->n; i++) {
		for (bi = 0; bi < s->nbins; bi++) {
			size_t at = (size_t)bi * s->cap_cols + p->cols[i];

			v = (double)s->bytes[at] * to_gbps;
			gmax = v > gmax ? v : gmax;
			if (shows_ccti(p, i) && s->ccti[at] > cmax)
				cmax = s->ccti[at];
		}
	}
	gmax = ceil(gmax / nice_step(gmax)) * nice_step(gmax);
	cmax = ceil(cmax / nice_step(cmax)) * nice_step(cmax);

	ibemu_buf_puts(b, "<g class=\"throughput-panel\">\n");
	axes(b, p, TOP, TPUT_H, gmax, "throughput (Gb/s)");
	for (i = 0; i < p->n; i++) {
		rank_in_role(p, i, &k, &n);
		series_attrs(b, p, i, "series", k, n);
		for (bi = 0; bi < s->nbins; bi++) {
			v = (double)s->bytes[(size_t)bi * s->cap_cols +
					     p->cols[i]] *
			    to_gbps;
			ibemu_buf_printf(b, "%s%.1f,%.1f", bi ? " " : "",
					 LEFT + (bi + 0.5) * bin_us /
							 p->t_end_us * PLOT_W,
					 TOP + TPUT_H - v / gmax * TPUT_H);
		}
		ibemu_buf_puts(b, "\"/>\n");
	}
	ibemu_buf_puts(b, "</g>\n<g class=\"ccti-panel\">\n");
	top = TOP + TPUT_H + GAP;
	axes(b, p, top, CCTI_H, cmax,
	     ibemu__traffic_has_roles(p->tr) ? "contributors' CCTI" : "CCTI");
	for (i = 0; i < p->n; i++) {
		if (!shows_ccti(p, i))
			continue;
		rank_in_role(p, i, &k, &n);
		series_attrs(b, p, i, "ccti", k, n);
		for (bi = 0; bi < s->nbins; bi++)
			ibemu_buf_printf(
				b, "%s%.1f,%.1f", bi ? " " : "",
				LEFT + (bi + 0.5) * bin_us / p->t_end_us *
						PLOT_W,
				top + CCTI_H -
					s->ccti[(size_t)bi * s->cap_cols +
						p->cols[i]] /
						cmax * CCTI_H);
		ibemu_buf_puts(b, "\"/>\n");
	}
	ibemu_buf_puts(b, "</g>\n");
}

static void legend(struct ibemu_buf *b, const struct plot *p)
{
	uint32_t i, k, n;
	double y;

	ibemu_buf_printf(b,
			 "<g class=\"legend\">\n<text x=\"%.1f\" y=\"%.1f\" "
			 "font-weight=\"bold\">role src-&gt;dst</text>\n",
			 LEGEND_X, TOP - 8);
	for (i = 0; i < p->n; i++) {
		const struct ibemu_traffic_flow *f =
			&p->tr->flows[p->s->col_flow[p->cols[i]]];
		enum ibemu_traffic_role role =
			ibemu__traffic_role(p->tr, p->s->col_flow[p->cols[i]]);

		y = TOP + i * LINE_H;
		rank_in_role(p, i, &k, &n);
		ibemu_buf_printf(b,
				 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				 "y2=\"%.1f\" stroke-width=\"3\" stroke=\"",
				 LEGEND_X, y + 5, LEGEND_X + 18, y + 5);
		colour(b, role, k, n);
		ibemu_buf_printf(b, "\"/><text x=\"%.1f\" y=\"%.1f\">%s ",
				 LEGEND_X + 24, y + 9,
				 ibemu_traffic_role_name(role));
		host_name(b, p->tr, f->src);
		ibemu_buf_puts(b, "-&gt;");
		host_name(b, p->tr, f->dst);
		ibemu_buf_puts(b, "</text>\n");
	}
	ibemu_buf_puts(b, "</g>\n");
}

/* Whether congestion control governs any plotted source: the study
 * takes part (--cc on) and its port has CC settings (hca.h), so its CCTI
 * can move. */
static int cc_on(const struct plot *p)
{
	uint32_t i;

	if (!p->tr->cc)
		return 0;
	for (i = 0; i < p->n; i++) {
		struct ibemu_traffic_flow *f =
			&p->tr->flows[p->s->col_flow[p->cols[i]]];

		if (ibemu_hca_cc_src(p->tr->e, p->tr->hosts[f->src].pi, f->sl,
				     &f->cc))
			return 1;
	}
	return 0;
}

int ibemu_traffic_plot_svg(const struct ibemu_traffic *tr, const char *subtitle,
			   struct ibemu_buf *out)
{
	struct plot p = {.tr = tr, .s = tr->series};
	double h, legend_h;

	if (!p.s || !tr->done)
		return -EINVAL;
	if (pick_cols(&p))
		return -ENOMEM;
	p.t_end_us = (double)p.s->nbins * (double)p.s->bin_ps / 1e6;
	legend_h = TOP + p.n * LINE_H + 20;
	h = TOP + TPUT_H + GAP + CCTI_H + 50;
	if (legend_h > h)
		h = legend_h;
	ibemu_buf_printf(out,
			 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			 "<svg xmlns=\"http://www.w3.org/2000/svg\" "
			 "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f "
			 "%.0f\" font-family=\"sans-serif\" "
			 "font-size=\"11\">\n"
			 "<rect width=\"100%%\" height=\"100%%\" "
			 "fill=\"white\"/>\n"
			 "<text class=\"title\" x=\"%.1f\" y=\"24\" "
			 "font-size=\"15\" font-weight=\"bold\">traffic ",
			 W, h, W, h, LEFT);
	xml_text(out, ibemu_traffic_pattern_name(tr->o.pattern));
	ibemu_buf_puts(out, " on ");
	xml_text(out, tr->topo->name ? tr->topo->name : "?");
	ibemu_buf_printf(out, ", congestion control %s",
			 cc_on(&p) ? "on" : "off");
	if (subtitle && *subtitle) {
		ibemu_buf_puts(out, ", ");
		xml_text(out, subtitle);
	}
	ibemu_buf_printf(out,
			 "</text>\n<text x=\"%.1f\" y=\"42\">%u of %u flows, "
			 "load %g, %llu-byte messages, bins of %g us</text>\n",
			 LEFT, p.n, tr->nflows, tr->o.load,
			 (unsigned long long)tr->o.msg_bytes,
			 (double)p.s->bin_ps / 1e6);
	panels(out, &p);
	legend(out, &p);
	ibemu_buf_puts(out, "</svg>\n");
	free(p.cols);
	return out->err;
}
