// SPDX-License-Identifier: MIT
/*
 * 'ibemu run --plot FILE.svg': a timeline of the run in virtual time, a
 * row per rank, from what each rank's libibverbs recorded of its clock
 * (verbs/trace.c): the time it waited (its clock leapt to a completion),
 * computed (ibemu_compute_ps), sent (ibv_post_send) and received (polls
 * that took completions). Intervals of a kind closer than a pixel are
 * drawn as one, so the file stays small however long the run.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run.h"
#include "sess_proto.h"

#define PLOT_W	   1000 /* pixels of virtual time */
#define PLOT_LEFT  130	/* the rank's label */
#define PLOT_ROW   22
#define PLOT_TOP   40
#define PLOT_KINDS 4

/* Drawn in this order, so that a short send or receive shows over a wait. */
static const struct {
	char letter;
	const char *name, *color;
	int y, h; /* within the row */
} kinds[PLOT_KINDS] = {
	{'w', "waiting", "#d0d0d0", 3, 16},
	{'c', "compute", "#4a7fc1", 3, 16},
	{'s', "send", "#2e9e44", 3, 8},
	{'r', "receive", "#e08a1e", 11, 8},
};

int ibemu__run_plot_begin(char *dir, size_t len)
{
	char trace[4200];
	const char *tmp = getenv("TMPDIR");

	if ((size_t)snprintf(dir, len, "%s/ibemu-plot-XXXXXX",
			     tmp && *tmp ? tmp : "/tmp") >= len ||
	    !mkdtemp(dir))
		return ibemu_cli_fail(1,
				      "run: --plot: cannot make a "
				      "directory for the ranks' traces: %s",
				      strerror(errno));
	snprintf(trace, sizeof(trace), "%s/trace", dir);
	if (setenv(IBEMU_SESS_ENV_TRACE, trace, 1))
		return ibemu_cli_fail(1, "out of memory");
	return 0;
}

/* Pixel column of virtual time 't'. */
static double x_of(uint64_t t, uint64_t v0, uint64_t v1)
{
	if (t <= v0)
		return PLOT_LEFT;
	if (t >= v1)
		return PLOT_LEFT + PLOT_W;
	return PLOT_LEFT + (double)(t - v0) * PLOT_W / (double)(v1 - v0);
}

/* One rank's intervals of kind 'k', merged where less than a pixel apart. */
static void draw_kind(FILE *out, FILE *in, int k, int row, uint64_t v0,
		      uint64_t v1)
{
	unsigned long long from, to;
	double x0 = -1, x1 = -1, a, b;
	char kind;

	rewind(in);
	while (fscanf(in, " %c %llu %llu", &kind, &from, &to) == 3) {
		if (kind != kinds[k].letter || to <= v0 || from >= v1)
			continue;
		a = x_of(from, v0, v1);
		b = x_of(to, v0, v1);
		if (x0 >= 0 && a <= x1 + 1) {
			if (b > x1)
				x1 = b;
			continue;
		}
		if (x0 >= 0)
			fprintf(out,
				"<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
				"height=\"%d\" fill=\"%s\"/>\n",
				x0, PLOT_TOP + row * PLOT_ROW + kinds[k].y,
				x1 - x0 < 0.5 ? 0.5 : x1 - x0, kinds[k].h,
				kinds[k].color);
		x0 = a;
		x1 = b;
	}
	if (x0 >= 0)
		fprintf(out,
			"<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
			"height=\"%d\" "
			"fill=\"%s\"/>\n",
			x0, PLOT_TOP + row * PLOT_ROW + kinds[k].y,
			x1 - x0 < 0.5 ? 0.5 : x1 - x0, kinds[k].h,
			kinds[k].color);
}

static void draw_axis(FILE *out, int n, uint64_t v0, uint64_t v1)
{
	int i, y = PLOT_TOP + n * PLOT_ROW + 4;
	double us = (double)(v1 - v0) / 1e6;

	fprintf(out,
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
		"stroke=\"black\"/>\n",
		PLOT_LEFT, y, PLOT_LEFT + PLOT_W, y);
	for (i = 0; i <= 10; i++)
		fprintf(out,
			"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
			"%.3f</text>\n",
			PLOT_LEFT + i * PLOT_W / 10, y + 16, us * i / 10);
	fprintf(out,
		"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">virtual time "
		"since the run started (us)</text>\n",
		PLOT_LEFT + PLOT_W / 2, y + 34);
	for (i = 0; i < PLOT_KINDS; i++)
		fprintf(out,
			"<rect x=\"%d\" y=\"12\" width=\"12\" height=\"12\" "
			"fill=\"%s\"/><text x=\"%d\" y=\"23\">%s</text>\n",
			PLOT_LEFT + i * 120, kinds[i].color,
			PLOT_LEFT + i * 120 + 16, kinds[i].name);
}

int ibemu__run_plot_write(const char *svg, const char *dir,
			  const struct ibemu_run_job *job, uint64_t vend)
{
	uint64_t v0 = job->vstart, v1 = vend > job->vstart ? vend : v0 + 1;
	char path[4200];
	FILE *out, *in;
	int r, k;

	out = fopen(svg, "we");
	if (!out)
		return ibemu_cli_fail(1, "run: --plot %s: %s", svg,
				      strerror(errno));
	fprintf(out,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<title>ibemu run on fabric %s: %d ranks, %.3f us of virtual "
		"time</title>\n",
		PLOT_LEFT + PLOT_W + 20, PLOT_TOP + job->n * PLOT_ROW + 60,
		job->fabric, job->n, (double)(v1 - v0) / 1e6);
	for (r = 0; r < job->n; r++) {
		fprintf(out,
			"<g class=\"rank\" data-rank=\"%d\">\n<text x=\"4\" "
			"y=\"%d\">rank %d %s</text>\n",
			r, PLOT_TOP + r * PLOT_ROW + 15, r, job->ranks[r].host);
		snprintf(path, sizeof(path), "%s/trace.%d", dir, r);
		in = fopen(path, "re");
		for (k = 0; in && k < PLOT_KINDS; k++)
			draw_kind(out, in, k, r, v0, v1);
		if (in)
			fclose(in);
		fprintf(out, "</g>\n");
	}
	draw_axis(out, job->n, v0, v1);
	fprintf(out, "</svg>\n");
	if (fclose(out))
		return ibemu_cli_fail(1, "run: --plot %s: %s", svg,
				      strerror(errno));
	return 0;
}

void ibemu__run_plot_end(const char *dir)
{
	struct dirent *e;
	char path[4200];
	DIR *d = opendir(dir);

	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, "trace.", 6) == 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}
