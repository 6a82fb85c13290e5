// SPDX-License-Identifier: MIT
/*
 * Unit tests of the topology YAML format: what every key does to the model
 * (units, defaults and their inheritance, the two link forms, port GUIDs),
 * the warnings of files that load, and the emitter: load(emit(load(F)))
 * equals load(F) for every shipped fabric, and emitting is a fixpoint.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "topo.h"
#include "unit.h"
#include "yaml.h"
#include "yaml_keys.h"

#define SRC IBEMU_TEST_SRCDIR

/* Loads 'text' named "test.yaml"; returns the topology or NULL. */
static struct ibemu_topo *load(const char *text, struct ibemu_diag *d)
{
	struct ibemu_topo *t = NULL;
	int ret;

	ibemu_diag_init(d);
	ret = ibemu_yaml_load("test.yaml", text, strlen(text), &t, d);
	if (ret) {
		fprintf(stderr, "load failed: %s\n", d->error);
		return NULL;
	}
	return t;
}

/* Loads 'text' that must load without warnings. */
static struct ibemu_topo *load_ok(const char *text)
{
	struct ibemu_diag d;
	struct ibemu_topo *t = load(text, &d);

	T_TRUE(t != NULL);
	T_EQ_INT(d.nwarnings, 0);
	ibemu_diag_fini(&d);
	return t;
}

/* The error of 'text', without the "test.yaml:" prefix; freed by caller. */
static char *load_error(const char *text)
{
	struct ibemu_topo *t = NULL;
	struct ibemu_diag d;
	char *s = NULL;

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_yaml_load("test.yaml", text, strlen(text), &t, &d),
		 -EINVAL);
	T_TRUE(t == NULL);
	if (d.error && !strncmp(d.error, "test.yaml:", 10))
		s = strdup(d.error + 10);
	ibemu_diag_fini(&d);
	return s;
}

#define T_ERROR(text, want)                  \
	do {                                 \
		char *_e = load_error(text); \
		T_EQ_STR(_e, want);          \
		free(_e);                    \
	} while (0)

static const struct ibemu_topo_node *find(const struct ibemu_topo *t,
					  const char *name)
{
	uint32_t i = ibemu_topo_find(t, name);

	T_TRUE(i != IBEMU_NONE);
	return i == IBEMU_NONE ? NULL : &t->nodes[i];
}

static char *emit(const struct ibemu_topo *t)
{
	struct ibemu_buf b;

	ibemu_buf_init(&b);
	ibemu_yaml_emit(t, &b);
	T_EQ_INT(b.err, 0);
	return ibemu_buf_steal(&b);
}

static void test_every_key(void)
{
	const struct ibemu_topo_node *spine, *leaf, *n1, *n2;
	const struct ibemu_topo_link *l;
	struct ibemu_topo *t = NULL;
	struct ibemu_diag d;

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_yaml_load_file(SRC "/tests/data/yaml/every-key.yaml", &t,
				      &d),
		 0);
	T_EQ_INT(d.nwarnings, 0);
	ibemu_diag_fini(&d);
	if (!t)
		return;
	T_EQ_STR(t->name, "every-key");
	T_EQ_STR(t->source, SRC "/tests/data/yaml/every-key.yaml");
	T_EQ_INT(t->defaults.mtu, 2048);
	T_EQ_INT(t->defaults.vls, 8);
	T_EQ_INT(t->defaults.width, 12);
	T_EQ_INT(t->defaults.speed, IBEMU_SPEED_HDR);
	T_EQ_INT(t->defaults.cable_length_mm, 1500);
	T_EQ_INT(t->defaults.buffer_per_vl, 32768);
	T_EQ_U64(t->defaults.routing_latency_ps, 120000);

	spine = find(t, "spine");
	leaf = find(t, "leaf");
	n1 = find(t, "node1");
	n2 = find(t, "node2");
	if (!spine || !leaf || !n1 || !n2)
		goto out;
	T_EQ_INT(spine->type, IBEMU_NODE_SWITCH);
	T_EQ_INT(spine->nports, 36);
	T_EQ_STR(spine->desc, "spine switch \"A\"");
	T_EQ_U64(spine->guid, 0x0002c90300000100ull);
	T_EQ_INT(spine->guid_loc.line, 16);
	T_EQ_INT(spine->guid_loc.col, 11);
	T_EQ_U64(spine->sysimage_guid, 0x0002c90300000001ull);
	T_EQ_U64(spine->vendor_id, 0x0002c9);
	T_EQ_U64(spine->device_id, 0xcf08);
	T_EQ_INT(spine->vls, 4);
	T_EQ_INT(spine->buffer_per_vl, 1 << 20);
	T_EQ_U64(spine->routing_latency_ps, 1500);
	T_EQ_U64(spine->ports[0].guid, spine->guid);
	T_EQ_U64(spine->ports[36].guid, spine->guid);
	T_EQ_INT(spine->loc.line, 13);
	T_EQ_INT(spine->loc.col, 11);

	/* Whatever a node leaves out comes from the defaults. */
	T_EQ_STR(leaf->desc, "leaf");
	T_EQ_INT(leaf->vls, 8);
	T_EQ_INT(leaf->buffer_per_vl, 32768);
	T_EQ_U64(leaf->routing_latency_ps, 120000);
	T_EQ_U64(leaf->guid, ibemu_topo_derive_guid("leaf"));
	T_EQ_U64(leaf->sysimage_guid, leaf->guid);
	T_EQ_U64(leaf->vendor_id, IBEMU_OUI);
	T_EQ_U64(leaf->device_id, IBEMU_DEVICE_SWITCH);

	T_EQ_INT(n1->type, IBEMU_NODE_HCA);
	T_EQ_INT(n1->nports, 2);
	T_EQ_STR(n1->desc, "node1 mlx5_0");
	T_EQ_U64(n1->guid, 0x0002c90300001000ull);
	T_EQ_U64(n1->ports[1].guid, 0x0002c90300001011ull);
	T_EQ_U64(n1->ports[2].guid, 0x0002c90300001012ull);
	T_EQ_U64(n1->sysimage_guid, 0x0002c90300000002ull);
	T_EQ_U64(n1->vendor_id, 0x0002c9);
	T_EQ_U64(n1->device_id, 0x1017);
	T_EQ_INT(n1->vls, 2);
	T_EQ_INT(n1->buffer_per_vl, 8192);
	T_EQ_INT(n2->nports, 1);
	/* No device_id: hca_model auto's adapter (HDR, connectx-6). */
	T_EQ_U64(n2->device_id, 0x101b);
	T_EQ_U64(n2->ports[1].guid, n2->guid + 1);

	T_EQ_INT(t->nlinks, 4);
	if (t->nlinks != 4)
		goto out;
	/* Short form: everything from the defaults. */
	l = &t->links[0];
	T_EQ_INT(l->node[0], ibemu_topo_find(t, "spine"));
	T_EQ_INT(l->port[0], 1);
	T_EQ_INT(l->node[1], ibemu_topo_find(t, "node1"));
	T_EQ_INT(l->port[1], 1);
	T_EQ_INT(l->width, 12);
	T_EQ_INT(l->speed, IBEMU_SPEED_HDR);
	T_EQ_INT(l->length_mm, 1500);
	T_EQ_U64(l->latency_ps, 7500);
	T_EQ_INT(l->loc.line, 37);
	T_EQ_INT(l->loc.col, 5);
	/* Long form with its own width, speed and length. */
	l = &t->links[1];
	T_EQ_INT(l->width, 4);
	T_EQ_INT(l->speed, IBEMU_SPEED_EDR);
	T_EQ_INT(l->length_mm, 500);
	T_EQ_U64(l->latency_ps, 2500);
	/* A latency of its own instead of a length. */
	l = &t->links[2];
	T_EQ_INT(l->port[0], 36);
	T_EQ_INT(l->port[1], 8);
	T_EQ_U64(l->latency_ps, 25000);
	T_EQ_INT(l->length_mm, 1500);
	T_EQ_INT(find(t, "spine")->ports[36].peer_port, 8);
out:
	ibemu_topo_destroy(t);
}

static void test_units(void)
{
	static const struct {
		const char *text;
		int ret;
		uint64_t v;
	} durations[] =
		{
			{"90ns", 0, 90000},
			{"0.1us", 0, 100000},
			{"1500ps", 0, 1500},
			{"1.5ns", 0, 1500},
			{"2ms", 0, 2000000000},
			{"0ps", 0, 0},
			{"12 ns", 0, 12000},
			{"90", -EDOM, 0},
			{"1.5ps", -ENOTSUP, 0},
			{"90s", -EINVAL, 0},
			{"ns", -EINVAL, 0},
			{"-1ns", -EINVAL, 0},
			{"1.ns", -EINVAL, 0},
			{"1e3ns", -EINVAL, 0},
			{"99999999999999999999ms", -ERANGE, 0},
		},
	  lengths[] =
		  {
			  {"3m", 0, 3000},    {"0.5m", 0, 500},
			  {"150cm", 0, 1500}, {"2000mm", 0, 2000},
			  {"1.25m", 0, 1250}, {"0.5mm", -ENOTSUP, 0},
			  {"3", -EDOM, 0},    {"3km", -EINVAL, 0},
		  },
	  sizes[] =
		  {
			  {"16KiB", 0, 16384},	 {"1MiB", 0, 1048576},
			  {"4096", 0, 4096},	 {"64B", 0, 64},
			  {"0.5KiB", 0, 512},	 {"16KB", -EINVAL, 0},
			  {"1.3B", -ENOTSUP, 0},
		  },
	  ints[] = {
		  {"36", 0, 36},
		  {"0x24", 0, 36},
		  {"0XfF", 0, 255},
		  {"0xffffffffffffffff", 0, UINT64_MAX},
		  {"0x1ffffffffffffffff", -ERANGE, 0},
		  {"18446744073709551616", -ERANGE, 0},
		  {"0x", -EINVAL, 0},
		  {"", -EINVAL, 0},
		  {"+3", -EINVAL, 0},
		  {"3.0", -EINVAL, 0},
	  };
	static const uint64_t ps[] = {
		1, 999, 1000, 1500, 90000, 123456789, 1000000000000ull, 7};
	uint64_t v;
	size_t i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(durations); i++) {
		v = 0;
		T_EQ_INT(ibemu__yaml_parse_duration(durations[i].text, &v),
			 durations[i].ret);
		T_EQ_U64(v, durations[i].v);
	}
	for (i = 0; i < IBEMU_ARRAY_SIZE(lengths); i++) {
		v = 0;
		T_EQ_INT(ibemu__yaml_parse_length(lengths[i].text, &v),
			 lengths[i].ret);
		T_EQ_U64(v, lengths[i].v);
	}
	for (i = 0; i < IBEMU_ARRAY_SIZE(sizes); i++) {
		v = 0;
		T_EQ_INT(ibemu__yaml_parse_size(sizes[i].text, &v),
			 sizes[i].ret);
		T_EQ_U64(v, sizes[i].v);
	}
	for (i = 0; i < IBEMU_ARRAY_SIZE(ints); i++) {
		v = 0;
		T_EQ_INT(ibemu__yaml_parse_uint(ints[i].text, &v), ints[i].ret);
		T_EQ_U64(v, ints[i].v);
	}
	/* What the emitter writes reads back to the same number. */
	for (i = 0; i < IBEMU_ARRAY_SIZE(ps); i++) {
		struct ibemu_buf b;

		ibemu_buf_init(&b);
		ibemu__yaml_format_duration(&b, ps[i]);
		T_EQ_INT(ibemu__yaml_parse_duration(b.data, &v), 0);
		T_EQ_U64(v, ps[i]);
		ibemu_buf_reset(&b);
		ibemu__yaml_format_length(&b, ps[i]);
		T_EQ_INT(ibemu__yaml_parse_length(b.data, &v), 0);
		T_EQ_U64(v, ps[i]);
		ibemu_buf_reset(&b);
		ibemu__yaml_format_size(&b, ps[i]);
		T_EQ_INT(ibemu__yaml_parse_size(b.data, &v), 0);
		T_EQ_U64(v, ps[i]);
		ibemu_buf_fini(&b);
	}
	{
		struct ibemu_buf b;

		ibemu_buf_init(&b);
		ibemu__yaml_format_duration(&b, 1500);
		T_EQ_STR(b.data, "1.5ns");
		ibemu_buf_reset(&b);
		ibemu__yaml_format_duration(&b, 90000);
		T_EQ_STR(b.data, "90ns");
		ibemu_buf_reset(&b);
		ibemu__yaml_format_length(&b, 2500);
		T_EQ_STR(b.data, "2.5m");
		ibemu_buf_reset(&b);
		ibemu__yaml_format_length(&b, 0);
		T_EQ_STR(b.data, "0mm");
		ibemu_buf_reset(&b);
		ibemu__yaml_format_size(&b, 16384);
		T_EQ_STR(b.data, "16KiB");
		ibemu_buf_reset(&b);
		ibemu__yaml_format_size(&b, 1088);
		T_EQ_STR(b.data, "1088");
		ibemu_buf_fini(&b);
	}
}

/* Units as the loader applies them to the model. */
static void test_units_in_model(void)
{
	struct ibemu_topo *t;

	T_ERROR("hcas: [{name: h}]\nlinks: [[h:1x, h:1]]\n",
		"2:10: error: bad link endpoint 'h:1x', expected node:port "
		"(such as sw1:3)");
	t = load_ok("defaults: {cable_length: 2000mm, buffer_per_vl: 4224,"
		    " routing_latency: 1500ps}\n"
		    "switches: [{name: s, ports: 0x10,"
		    " buffer_per_vl: 0.25MiB}]\n"
		    "hcas: [{name: h, ports: 2, vendor_id: 0x02c9}]\n"
		    "links: [{a: s:1, b: h:1, latency: 0.25us},"
		    " {a: s:2, b: h:2, cable_length: 1m}]\n");
	if (!t)
		return;
	T_EQ_INT(t->defaults.cable_length_mm, 2000);
	T_EQ_INT(t->defaults.buffer_per_vl, 4224);
	T_EQ_U64(t->defaults.routing_latency_ps, 1500);
	T_EQ_INT(t->nodes[0].nports, 16);
	T_EQ_INT(t->nodes[0].buffer_per_vl, 262144);
	T_EQ_INT(t->nodes[1].buffer_per_vl, 4224);
	T_EQ_U64(t->nodes[1].vendor_id, 0x2c9);
	T_EQ_U64(t->links[0].latency_ps, 250000);
	T_EQ_INT(t->links[0].length_mm, 2000);
	T_EQ_U64(t->links[1].latency_ps, 5000);
	T_EQ_INT(t->links[1].length_mm, 1000);
	ibemu_topo_destroy(t);
}

static void test_defaults_inheritance(void)
{
	struct ibemu_topo *t;
	uint32_t i;

	/* Built-in defaults when the file gives none. */
	t = load_ok("hcas: [{name: h}]\n");
	if (t) {
		T_EQ_INT(t->defaults.mtu, 4096);
		T_EQ_INT(t->defaults.vls, 4);
		T_EQ_INT(t->defaults.width, 4);
		T_EQ_INT(t->defaults.speed, IBEMU_SPEED_EDR);
		T_EQ_INT(t->defaults.cable_length_mm, 2000);
		T_EQ_INT(t->defaults.buffer_per_vl, 16384);
		T_EQ_U64(t->defaults.routing_latency_ps, 0);
		T_EQ_INT(t->nodes[0].vls, 4);
		T_EQ_INT(t->nodes[0].buffer_per_vl, 16384);
	}
	ibemu_topo_destroy(t);

	/* The defaults block applies wherever it sits in the file, and to
	 * generated nodes and links as well as listed ones. */
	t = load_ok("generate: {kind: single-switch, radix: 8, hosts: 2}\n"
		    "hcas: [{name: h3}, {name: h4, vls: 1}]\n"
		    "links: [[sw:3, h3:1], {a: sw:4, b: h4:1, speed: FDR}]\n"
		    "defaults:\n  vls: 2\n  speed: NDR\n  width: 1x\n"
		    "  cable_length: 7m\n  buffer_per_vl: 8KiB\n"
		    "  routing_latency: 50ns\n");
	if (!t)
		return;
	for (i = 0; i < t->nnodes; i++) {
		const struct ibemu_topo_node *n = &t->nodes[i];

		T_EQ_INT(n->vls, strcmp(n->name, "h4") ? 2 : 1);
		T_EQ_INT(n->buffer_per_vl, 8192);
		T_EQ_U64(n->routing_latency_ps, 50000);
	}
	T_EQ_INT(t->nlinks, 4);
	for (i = 0; i < t->nlinks; i++) {
		const struct ibemu_topo_link *l = &t->links[i];

		T_EQ_INT(l->width, 1);
		T_EQ_INT(l->speed, i == 3 ? IBEMU_SPEED_FDR : IBEMU_SPEED_NDR);
		T_EQ_INT(l->length_mm, 7000);
		T_EQ_U64(l->latency_ps, 35000);
	}
	ibemu_topo_destroy(t);
}

static void test_routing_latency(void)
{
	struct ibemu_topo *t;

	/* Not given: 0 in the model, which means "the default of the speed". */
	t = load_ok(
		"defaults: {speed: QDR}\nswitches: [{name: s, ports: 4}]\n");
	if (t) {
		T_EQ_U64(t->nodes[0].routing_latency_ps, 0);
		T_EQ_U64(ibemu_routing_latency_default_ps(t->defaults.speed),
			 100000);
	}
	ibemu_topo_destroy(t);
	t = load_ok("defaults: {routing_latency: 0.2us}\n"
		    "switches: [{name: s, ports: 4},"
		    " {name: r, ports: 4, routing_latency: 60ns}]\n"
		    "links: [[s:1, r:1]]\n");
	if (t) {
		T_EQ_U64(t->nodes[0].routing_latency_ps, 200000);
		T_EQ_U64(t->nodes[1].routing_latency_ps, 60000);
	}
	ibemu_topo_destroy(t);
	T_ERROR("defaults: {routing_latency: 0ns}\nhcas: [{name: h}]\n",
		"1:29: error: routing_latency 0ns is out of range, expected "
		"1ps..1ms");
	T_ERROR("hcas: [{name: h, routing_latency: 60ns}]\n",
		"1:18: error: unknown key 'routing_latency' in an HCA, "
		"expected one of name, ports, description, guid, port_guids, "
		"system_image_guid, vendor_id, device_id, vls, buffer_per_vl, "
		"hca_model, ip");
}

/* hca_model: auto (the link speed's preset) by default, a preset or wire
 * in defaults: or per HCA, a bad name an error at its line and column;
 * written back when not the default. */
static void test_hca_model(void)
{
	struct ibemu_topo *t;
	char *y;

	t = load_ok("switches: [{name: s, ports: 4}]\nhcas: [{name: h}]\n"
		    "links: [[s:1, h:1]]\n");
	if (t) {
		T_EQ_INT(t->defaults.hca_model, IBEMU_HCA_AUTO);
		T_EQ_INT(t->nodes[1].hca_model, IBEMU_HCA_AUTO);
		T_EQ_INT(ibemu_topo_hca_kind(t, 1), IBEMU_HCA_CX5);
		y = emit(t);
		T_TRUE(y && !strstr(y, "hca_model"));
		free(y);
	}
	ibemu_topo_destroy(t);
	t = load_ok("defaults: {hca_model: wire, speed: HDR}\n"
		    "switches: [{name: s, ports: 4}]\nhcas: [{name: h}]\n"
		    "links: [[s:1, h:1]]\n");
	if (t) {
		T_EQ_INT(ibemu_topo_hca_kind(t, 1), IBEMU_HCA_WIRE);
		T_EQ_INT(t->nodes[1].device_id, IBEMU_DEVICE_HCA);
		y = emit(t);
		T_TRUE(y && strstr(y, "  hca_model: wire\n"));
		free(y);
	}
	ibemu_topo_destroy(t);
	t = load_ok(
		"defaults: {hca_model: connectx-6}\n"
		"switches: [{name: s, ports: 4}]\n"
		"hcas: [{name: h}, {name: g, hca_model: ConnectX-4},"
		" {name: a, hca_model: auto}, {name: w, hca_model: wire}]\n"
		"links: [[s:1, h:1], [s:2, g:1], [s:3, a:1], [s:4, w:1]]\n");
	if (t) {
		T_EQ_INT(t->defaults.hca_model, IBEMU_HCA_CX6);
		T_EQ_INT(t->nodes[1].hca_model, IBEMU_HCA_CX6);
		T_EQ_INT(t->nodes[2].hca_model, IBEMU_HCA_CX4);
		T_EQ_INT(t->nodes[3].hca_model, IBEMU_HCA_AUTO);
		T_EQ_INT(t->nodes[4].hca_model, IBEMU_HCA_WIRE);
		/* A preset's HCA reports its adapter's PCI device ID (auto:
		 * the default speed's, EDR, connectx-5), wire ibemu's. */
		T_EQ_INT(t->nodes[1].device_id, 0x101b);
		T_EQ_INT(t->nodes[2].device_id, 0x1013);
		T_EQ_INT(t->nodes[3].device_id, 0x1017);
		T_EQ_INT(t->nodes[4].device_id, IBEMU_DEVICE_HCA);
		y = emit(t);
		T_TRUE(y && strstr(y, "  hca_model: connectx-6\n"));
		T_TRUE(y && strstr(y, "hca_model: connectx-4}"));
		T_TRUE(y && strstr(y, "hca_model: wire}"));
		T_TRUE(y && !strstr(y, "device_id"));
		free(y);
	}
	ibemu_topo_destroy(t);
	T_EQ_INT(ibemu_hca_kind_for_speed(IBEMU_SPEED_EDR), IBEMU_HCA_CX5);
	T_EQ_INT(ibemu_hca_kind_for_speed(IBEMU_SPEED_HDR), IBEMU_HCA_CX6);
	T_EQ_INT(ibemu_hca_kind_for_speed(IBEMU_SPEED_NDR), IBEMU_HCA_CX7);
	T_EQ_INT(ibemu_hca_kind_for_speed(IBEMU_SPEED_FDR), IBEMU_HCA_CX4);
	T_ERROR("hcas: [{name: h, hca_model: connectx-9}]\n",
		"1:29: error: bad hca_model 'connectx-9', expected wire, auto, "
		"connectx-4, connectx-5, connectx-6 or connectx-7");
	T_ERROR("switches: [{name: s, ports: 2, hca_model: wire}]\n",
		"1:32: error: unknown key 'hca_model' in a switch, expected "
		"one of name, ports, description, guid, system_image_guid, "
		"vendor_id, device_id, vls, buffer_per_vl, routing_latency");
}

/* hca_tuning: its values reach the topology, what was not given stays 0
 * (the preset's), it is written back, and bad values name the key. */
static void test_hca_tuning(void)
{
	struct ibemu_topo *t, *t2;
	char *y;

	t = load_ok("hca_tuning: {doorbell: 250ns, dma_read: 600ns,"
		    " max_read_request: 4KiB}\nhcas: [{name: h}]\n");
	if (t) {
		T_EQ_U64(t->hca_tuning.doorbell_ps, 250000);
		T_EQ_U64(t->hca_tuning.dma_read_ps, 600000);
		T_EQ_U64(t->hca_tuning.dma_write_ps, 0);
		T_EQ_INT(t->hca_tuning.max_payload, 0);
		T_EQ_INT(t->hca_tuning.max_read_request, 4096);
		y = emit(t);
		T_TRUE(y && strstr(y, "hca_tuning:\n  doorbell: 250ns\n"
				      "  dma_read: 600ns\n"
				      "  max_read_request: 4096\n"));
		t2 = y ? load_ok(y) : NULL;
		if (t2)
			T_TRUE(!memcmp(&t2->hca_tuning, &t->hca_tuning,
				       sizeof(t->hca_tuning)));
		ibemu_topo_destroy(t2);
		free(y);
	}
	ibemu_topo_destroy(t);
	t = load_ok("hcas: [{name: h}]\n");
	if (t) {
		y = emit(t);
		T_TRUE(y && !strstr(y, "hca_tuning"));
		free(y);
	}
	ibemu_topo_destroy(t);
	T_ERROR("hca_tuning: {doorbell: 100ns}\nhcas: [{name: h}]\n",
		"1:24: error: doorbell 100ns is out of range, expected "
		"150ns..100us: with the HCA's 150 ns send pipeline it is the "
		"time rule's 300 ns lookahead (docs/design.md 3): work may not "
		"reach the wire sooner after its post");
	T_ERROR("hca_tuning: {max_payload: 300}\nhcas: [{name: h}]\n",
		"1:27: error: bad max_payload 300, expected 128, 256, 512, "
		"1024, 2048 or 4096 bytes");
	T_ERROR("hca_tuning: {dma_reed: 1us}\nhcas: [{name: h}]\n",
		"1:14: error: unknown key 'dma_reed' in hca_tuning, expected "
		"one of doorbell, dma_read, dma_write, max_payload, "
		"max_read_request");
}

static void test_guids(void)
{
	struct ibemu_topo *t;
	const struct ibemu_topo_node *n;

	t = load_ok(
		"switches: [{name: s, ports: 3, guid: 0x0000000000000100}]\n"
		"hcas: [{name: h, ports: 3, guid: 0x200},"
		" {name: p, ports: 2, port_guids: [0x301, 0x302]}]\n"
		"links: [[s:1, h:1], [s:2, p:2]]\n");
	if (!t)
		return;
	n = find(t, "s");
	T_EQ_U64(n->guid, 0x100);
	T_EQ_U64(n->ports[0].guid, 0x100);
	T_EQ_U64(n->ports[3].guid, 0x100);
	T_EQ_U64(n->sysimage_guid, 0x100);
	n = find(t, "h");
	T_EQ_U64(n->ports[1].guid, 0x201);
	T_EQ_U64(n->ports[3].guid, 0x203);
	n = find(t, "p");
	T_EQ_U64(n->guid, ibemu_topo_derive_guid("p"));
	T_EQ_U64(n->ports[1].guid, 0x301);
	T_EQ_U64(n->ports[2].guid, 0x302);
	ibemu_topo_destroy(t);

	/* Finalize reports a clash at the GUID that was given. */
	T_ERROR("hcas:\n  - {name: a, ports: 2, guid: 0x100}\n"
		"  - {name: b, guid: 0x102}\n",
		"3:21: error: duplicate GUID: node 'b' uses a GUID of node 'a' "
		"(GUIDs must be unique in a fabric)");
}

static void test_link_errors(void)
{
	static const char nodes[] =
		"switches: [{name: sw1, ports: 36}, {name: sw2, ports: 4}]\n"
		"hcas: [{name: h1}, {name: h2, ports: 2}]\n";
	char text[512];

#define LINKS(l) (snprintf(text, sizeof(text), "%slinks:\n%s", nodes, l), text)
	T_ERROR(LINKS("  - [sw1:40, h1:1]\n"),
		"4:6: error: port 40 of 'sw1' is out of range, expected 1..36");
	T_ERROR(LINKS("  - [sw1:1, h2:3]\n"),
		"4:13: error: port 3 of 'h2' is out of range, expected 1..2");
	T_ERROR(LINKS("  - [h2:0, sw1:3]\n"),
		"4:6: error: port 0 of 'h2' is out of range, expected 1..2");
	T_ERROR(LINKS("  - [sw2:0, sw1:3]\n"),
		"4:6: error: port 0 of switch 'sw2' is its management port and "
		"has no cable, expected 1..4");
	T_ERROR(LINKS("  - [sw1:1, h1:1]\n  - [h2:1, sw1:1]\n"),
		"5:12: error: port 1 of 'sw1' is cabled twice (first by the "
		"link at 4:5), expected one link per port");
	T_ERROR(LINKS("  - {a: h2:2, b: h2:2}\n"),
		"4:18: error: port 2 of 'h2' is cabled to itself, expected two "
		"different ports");
	T_ERROR(LINKS("  - [sw1:1, h3:1]\n"),
		"4:13: error: unknown node 'h3' in link endpoint 'h3:1', "
		"expected the name of a switch or an HCA");
	T_ERROR(LINKS("  - [sw1:1, 'h1: 1']\n"),
		"4:13: error: bad link endpoint 'h1: 1', expected node:port "
		"(such as sw1:3)");
	T_ERROR(LINKS("  - [sw1:1]\n"),
		"4:5: error: a link with 1 endpoint, expected 2 as [node:port, "
		"node:port]");
	T_ERROR(LINKS("  - {a: sw1:1, b: h1:1, latency: 5ns, cable_length: "
		      "1m}\n"),
		"4:25: error: a link with both cable_length (at 4:39) and "
		"latency, expected one of them");
#undef LINKS
	/* A node cabled to itself on two ports is a loopback, not an error. */
	{
		struct ibemu_topo *t = load_ok(
			"hcas: [{name: h, ports: 2}]\nlinks: [[h:1, h:2]]\n");

		T_TRUE(t != NULL);
		ibemu_topo_destroy(t);
	}
}

static void test_fabric_name(void)
{
	static const struct {
		const char *file, *name;
	} cases[] = {
		{"topologies/ft2.yaml", "ft2"},
		{"/a/b.c/my fabric.v2.yaml", "my_fabric.v2"},
		{"plain", "plain"},
		/* A fabric name never starts with '.' or '-'. */
		{".hidden", "_hidden"},
		{"dir/-x.yaml", "_x"},
		{"..yaml", "_"},
		{"a/b c.d!", "b_c"},
		{"dir/", "fabric"},
		{NULL, "fabric"},
	};
	static const char text[] = "hcas: [{name: h}]\n";
	size_t i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(cases); i++) {
		struct ibemu_topo *t = NULL;
		struct ibemu_diag d;

		ibemu_diag_init(&d);
		T_EQ_INT(ibemu_yaml_load(cases[i].file, text, strlen(text), &t,
					 &d),
			 0);
		if (t)
			T_EQ_STR(t->name, cases[i].name);
		ibemu_topo_destroy(t);
		ibemu_diag_fini(&d);
	}
	{
		struct ibemu_topo *t =
			load_ok("name: x-1\nhcas: [{name: h}]\n");

		if (t)
			T_EQ_STR(t->name, "x-1");
		ibemu_topo_destroy(t);
	}
}

/* Files that load, with the warning they must give. */
static void test_warnings(void)
{
	static const struct {
		const char *file, *warning;
	} cases[] = {
		{"disconnected.yaml",
		 "4:12: warning: fabric is not connected: 2 of 4 nodes cannot "
		 "be reached from 'sw1', 'sw2' among them"},
		{"small-buffer.yaml",
		 "3:42: warning: buffer_per_vl 2KiB is smaller than one "
		 "4096-byte MTU packet with its headers (4224 bytes): such "
		 "packets can never be sent"},
		{"tuning-all-wire.yaml",
		 "4:1: warning: hca_tuning changes nothing: no HCA has a host "
		 "model (every one is hca_model: wire)"},
	};
	size_t i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(cases); i++) {
		char path[4096], *want = NULL;
		struct ibemu_topo *t = NULL;
		struct ibemu_diag d;

		snprintf(path, sizeof(path), "%s/tests/data/yaml/%s", SRC,
			 cases[i].file);
		T_TRUE(asprintf(&want, "%s:%s", path, cases[i].warning) > 0);
		ibemu_diag_init(&d);
		T_EQ_INT(ibemu_yaml_load_file(path, &t, &d), 0);
		T_TRUE(t != NULL);
		T_EQ_INT(d.nwarnings, 1);
		if (d.nwarnings)
			T_EQ_STR(d.warnings[0], want);
		free(want);
		ibemu_topo_destroy(t);
		ibemu_diag_fini(&d);
	}
	/* A default too small warns once, at the default. */
	{
		struct ibemu_diag d;
		struct ibemu_topo *t = load(
			"defaults: {mtu: 2048, buffer_per_vl: 2KiB}\n"
			"hcas: [{name: a}, {name: b}]\nlinks: [[a:1, b:1]]\n",
			&d);

		T_TRUE(t != NULL);
		T_EQ_INT(d.nwarnings, 1);
		ibemu_topo_destroy(t);
		ibemu_diag_fini(&d);
	}
}

/* Text that is not NUL-terminated, or holds NUL bytes, is still safe. */
static void test_raw_bytes(void)
{
	static const char text[] = "hcas: [{name: h}]\nlinks: [[h:1, h:2]]\n";
	static const char nul[] = "hcas: [{name: \"a\\0b\"}]\n";
	static const char raw_nul[] = "hcas: [{name: a}]\n\0name: b\n";
	struct ibemu_topo *t = NULL;
	struct ibemu_diag d;

	/* Only the first line: the link that would fail is cut off. */
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_yaml_load("x", text, 18, &t, &d), 0);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
	T_ERROR(nul, "1:15: error: name holds a NUL character, expected a name "
		     "of letters, digits and _.+- (at most 63 characters)");
	t = NULL;
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_yaml_load("x", raw_nul, sizeof(raw_nul) - 1, &t, &d),
		 -EINVAL);
	T_TRUE(d.error &&
	       !strncmp(d.error, "x:2:1: error: invalid YAML: ", 28));
	ibemu_diag_fini(&d);
}

/* Compares two models by node name (emitting may reorder nodes). */
static void assert_same(const struct ibemu_topo *a, const struct ibemu_topo *b)
{
	uint32_t i;
	unsigned p;

	T_EQ_STR(a->name, b->name);
	T_TRUE(!memcmp(&a->defaults, &b->defaults, sizeof(a->defaults)));
	T_EQ_INT(a->nnodes, b->nnodes);
	T_EQ_INT(a->nlinks, b->nlinks);
	if (a->nnodes != b->nnodes || a->nlinks != b->nlinks)
		return;
	for (i = 0; i < a->nnodes; i++) {
		const struct ibemu_topo_node *x = &a->nodes[i], *y;
		uint32_t j = ibemu_topo_find(b, x->name);

		T_TRUE(j != IBEMU_NONE);
		if (j == IBEMU_NONE)
			return;
		y = &b->nodes[j];
		T_EQ_INT(x->type, y->type);
		T_EQ_STR(x->desc, y->desc);
		T_EQ_U64(x->guid, y->guid);
		T_EQ_U64(x->sysimage_guid, y->sysimage_guid);
		T_EQ_U64(x->vendor_id, y->vendor_id);
		T_EQ_U64(x->device_id, y->device_id);
		T_EQ_INT(x->nports, y->nports);
		T_EQ_INT(x->vls, y->vls);
		T_EQ_INT(x->buffer_per_vl, y->buffer_per_vl);
		T_EQ_U64(x->routing_latency_ps, y->routing_latency_ps);
		T_EQ_U64(x->ip, y->ip);
		if (x->nports != y->nports)
			continue;
		for (p = 0; p <= x->nports; p++) {
			const struct ibemu_topo_port *xp = &x->ports[p];
			const struct ibemu_topo_port *yp = &y->ports[p];

			T_EQ_U64(xp->guid, yp->guid);
			T_EQ_INT(xp->peer_port, yp->peer_port);
			T_EQ_INT(xp->peer_node == IBEMU_NONE,
				 yp->peer_node == IBEMU_NONE);
			if (xp->peer_node != IBEMU_NONE &&
			    yp->peer_node != IBEMU_NONE)
				T_EQ_STR(a->nodes[xp->peer_node].name,
					 b->nodes[yp->peer_node].name);
		}
	}
	for (i = 0; i < a->nlinks; i++) {
		const struct ibemu_topo_link *x = &a->links[i],
					     *y = &b->links[i];
		int e;

		for (e = 0; e < 2; e++) {
			T_EQ_STR(a->nodes[x->node[e]].name,
				 b->nodes[y->node[e]].name);
			T_EQ_INT(x->port[e], y->port[e]);
		}
		T_EQ_INT(x->width, y->width);
		T_EQ_INT(x->speed, y->speed);
		T_EQ_INT(x->length_mm, y->length_mm);
		T_EQ_U64(x->latency_ps, y->latency_ps);
	}
}

/* load(emit(t)) is t again, and emitting that gives the same text. */
static void check_roundtrip(const struct ibemu_topo *t, const char *what)
{
	char *text = emit(t), *again = NULL;
	struct ibemu_topo *u = NULL;
	struct ibemu_diag d;

	if (!text)
		return;
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_yaml_load("emitted.yaml", text, strlen(text), &u, &d),
		 0);
	if (!u) {
		fprintf(stderr, "%s: emitted text does not load: %s\n%s", what,
			d.error, text);
		goto out;
	}
	assert_same(t, u);
	again = emit(u);
	T_EQ_STR(again, text);
out:
	free(text);
	free(again);
	ibemu_topo_destroy(u);
	ibemu_diag_fini(&d);
}

static int is_yaml(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 5 && !strcmp(e->d_name + n - 5, ".yaml");
}

static void roundtrip_dir(const char *dir, int *count)
{
	struct dirent **list = NULL;
	int n = scandir(dir, &list, is_yaml, alphasort), i;

	for (i = 0; i < n; i++) {
		char path[4096];
		struct ibemu_topo *t = NULL;
		struct ibemu_diag d;

		snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
		ibemu_diag_init(&d);
		T_EQ_INT(ibemu_yaml_load_file(path, &t, &d), 0);
		if (t) {
			check_roundtrip(t, path);
			(*count)++;
		} else {
			fprintf(stderr, "%s: %s\n", path, d.error);
		}
		ibemu_topo_destroy(t);
		ibemu_diag_fini(&d);
		free(list[i]);
	}
	free(list);
}

static void test_roundtrip_files(void)
{
	int count = 0;

	roundtrip_dir(SRC "/topologies", &count);
	roundtrip_dir(SRC "/tests/data/yaml", &count);
	T_TRUE(count >= 3);
}

/*
 * rdma_cm's addresses: the plan (127.10.0.0 + 16 * HCA index + port), ip:
 * for port 1 and the next ones for the other ports, and its errors.
 */
static void test_ip_addresses(void)
{
	struct ibemu_topo *t;

	t = load_ok("switches: [{name: s, ports: 4}]\n"
		    "hcas: [{name: a, ports: 2}, {name: b, ip: 127.1.2.3},"
		    " {name: c}]\n"
		    "links: [[s:1, a:1], [s:2, b:1], [s:3, c:1]]\n");
	if (!t)
		return;
	T_EQ_U64(ibemu_topo_port_ip(find(t, "a"), 1), 0x7f0a0001);
	T_EQ_U64(ibemu_topo_port_ip(find(t, "a"), 2), 0x7f0a0002);
	T_EQ_U64(ibemu_topo_port_ip(find(t, "b"), 1), 0x7f010203);
	T_EQ_U64(ibemu_topo_port_ip(find(t, "c"), 1), 0x7f0a0021);
	check_roundtrip(t, "ip");
	ibemu_topo_destroy(t);

	T_ERROR("hcas: [{name: a, ip: 10.0.0.1}]\n",
		"1:22: error: ip 10.0.0.1 is outside 127.0.0.0/8, expected a "
		"loopback address (with room for 1 port), which cannot route "
		"off the machine");
	T_ERROR("hcas: [{name: a, ports: 2, ip: 127.255.255.255}]\n",
		"1:32: error: ip 127.255.255.255 + ports is outside "
		"127.0.0.0/8, expected a loopback address (with room for 2 "
		"ports), which cannot route off the machine");
	T_ERROR("hcas: [{name: a, ip: 127.1.2}]\n",
		"1:22: error: ip '127.1.2' is not an IPv4 address, expected a "
		"dotted quad such as 127.10.0.1");
	T_ERROR("hcas: [{name: a, ip: \"::ffff:7f00:1\"}]\n",
		"1:22: error: ip '::ffff:7f00:1' is not an IPv4 address, "
		"expected a dotted quad such as 127.10.0.1");
	T_ERROR("hcas:\n  - {name: a, ports: 2, ip: 127.0.0.5}\n"
		"  - {name: b, ip: 127.0.0.6}\n",
		"3:19: error: ip 127.0.0.6 of 'b' port 1 is also that of 'a' "
		"port 2 (given), expected an address unique in the fabric");
	T_ERROR("hcas:\n  - {name: a}\n  - {name: b, ip: 127.10.0.1}\n",
		"3:19: error: ip 127.10.0.1 of 'b' port 1 is also that of 'a' "
		"port 1 (by the address plan), expected an address unique in "
		"the fabric");
}

static void test_roundtrip_strings(void)
{
	static const char *const texts[] = {
		/* Names and descriptions that need quotes. */
		"name: \"123\"\n"
		"hcas:\n"
		"  - {name: \"true\", description: 'it''s \"quoted\" \\\\ "
		"here'}\n"
		"  - {name: \"y\", description: \"tab\\there\\nnewline\"}\n"
		"  - {name: \"-x\", description: \"caf\xc3\xa9 # not a "
		"comment: "
		"no\"}\n"
		"  - {name: \"1e5\", description: \"\"}\n"
		"  - {name: \".5\", description: \"[a, {b: c}]\"}\n"
		"  - {name: null_, description: \"null\"}\n"
		"links: [[\"true:1\", \"y:1\"], [\"-x:1\", \"1e5:1\"]]\n",
		/* Everything non-default on nodes and links. */
		"defaults: {mtu: 256, vls: 1, width: 2x, speed: XDR,"
		" cable_length: 3mm, buffer_per_vl: 320, routing_latency: "
		"1ps}\n"
		"switches: [{name: s, ports: 254, guid: 0xffffffffffffffff,"
		" system_image_guid: 0x1, vendor_id: 0, device_id: 0xffff,"
		" vls: 15, buffer_per_vl: 16MiB, routing_latency: 1ms}]\n"
		"hcas: [{name: h, ports: 3, port_guids: [0x5, 0x7, 0x6],"
		" device_id: 0x1, ip: 127.0.0.2}]\n"
		"links: [{a: s:254, b: h:3, latency: 0ps},"
		" {a: s:1, b: h:1, cable_length: 100000m}, [h:2, s:2]]\n",
		/* A generated fabric with listed additions. */
		"generate: {kind: ring, switches: 4, hosts_per_switch: 1}\n"
		"hcas: [{name: extra, ports: 2}]\n"
		"links: [{a: extra:1, b: extra:2, speed: SDR}]\n",
	};
	size_t i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(texts); i++) {
		struct ibemu_diag d;
		struct ibemu_topo *t = load(texts[i], &d);

		T_TRUE(t != NULL);
		if (t)
			check_roundtrip(t, texts[i]);
		ibemu_topo_destroy(t);
		ibemu_diag_fini(&d);
	}
}

/* The emitter leaves out what the loader would fill in. */
static void test_emit_text(void)
{
	struct ibemu_topo *t = load_ok(
		"name: tiny\n"
		"defaults: {speed: HDR}\n"
		"switches: [{name: sw, ports: 8, description: sw, vls: 4,"
		" vendor_id: 0x02ebe0, device_id: 0xeb02}]\n"
		"hcas:\n"
		"  - {name: h1, description: \"h1 HCA-1\", ports: 1}\n"
		"  - {name: h2, ports: 2, port_guids: [0x10, 0x11]}\n"
		"links:\n"
		"  - {a: sw:1, b: h1:1, speed: HDR, cable_length: 2m}\n"
		"  - {a: sw:2, b: h2:1, width: 1x}\n"
		"  - {a: sw:3, b: h2:2, latency: 15ns}\n");
	char *text, *want = NULL;

	if (!t)
		return;
	text = emit(t);
	T_TRUE(asprintf(&want,
			"name: tiny\n"
			"defaults:\n"
			"  mtu: 4096\n"
			"  vls: 4\n"
			"  width: 4x\n"
			"  speed: HDR\n"
			"  cable_length: 2m\n"
			"  buffer_per_vl: 16KiB\n"
			"  # routing_latency: by speed, 130ns for HDR\n"
			"switches:\n"
			"  - {name: sw, ports: 8}\n"
			"hcas:\n"
			"  - {name: h1, description: \"h1 HCA-1\"}\n"
			"  - {name: h2, ports: 2, port_guids: [0x%016llx, "
			"0x%016llx]}\n"
			"links:\n"
			"  - [sw:1, h1:1]\n"
			"  - {a: sw:2, b: h2:1, width: 1x}\n",
			0x10ull, 0x11ull) > 0);
	/* The latency link keeps its latency: 15 ns is not 2 m of cable. */
	if (want && text) {
		T_TRUE(!strncmp(text, want, strlen(want)));
		T_EQ_STR(text + strlen(want),
			 "  - {a: sw:3, b: h2:2, latency: 15ns}\n");
	}
	free(want);
	free(text);
	ibemu_topo_destroy(t);
}

/* Text YAML cannot hold: bytes that are not UTF-8 become '?'. */
static void test_emit_bytes(void)
{
	static const char odd[] =
		"x\xc2\x88\xc2\x85\xe2\x80\xa8\xe2\x80\xa9"
		"\xef\xbb\xbf\xef\xbf\xbe\x7f\t\xf0\x9f\x99\x82"
		"e";
	struct ibemu_topo *t, *u = NULL;
	struct ibemu_diag d;
	uint32_t h;
	char *text;

	T_EQ_INT(ibemu_topo_create(&t), 0);
	T_EQ_INT(ibemu_topo_set_name(t, "bytes"), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "h", 1, &h), 0);
	T_EQ_INT(ibemu_topo_set_desc(t, h, "a\xff\x01\xc3\xa9\xe2\x82 \"q\""),
		 0);
	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_finalize(t, &d), 0);
	text = emit(t);
	T_TRUE(text &&
	       strstr(text, "description: \"a?\\x01\xc3\xa9?? \\\"q\\\"\"}"));
	T_EQ_INT(ibemu_yaml_load("x", text, strlen(text), &u, &d), 0);
	if (u)
		T_EQ_STR(u->nodes[0].desc, "a?\x01\xc3\xa9?? \"q\"");
	free(text);
	ibemu_topo_destroy(u);
	u = NULL;

	/* Controls, line breaks YAML would fold and the BOM read back exactly. */
	T_EQ_INT(ibemu_topo_set_desc(t, h, odd), 0);
	text = emit(t);
	T_TRUE(text &&
	       strstr(text, "\\x88\\x85\\u2028\\u2029\\ufeff\\ufffe\\x7f"));
	T_EQ_INT(ibemu_yaml_load("x", text, strlen(text), &u, &d), 0);
	if (u)
		T_EQ_STR(u->nodes[0].desc, odd);
	free(text);
	ibemu_topo_destroy(u);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

/* The key tables agree with the model's defaults and with the docs. */
static void test_key_tables(void)
{
	const struct ibemu__yaml_section *def =
		ibemu__yaml_section(IBEMU__YS_DEFAULTS);
	struct ibemu_topo *t;
	char *readme = NULL;
	size_t len, s, k;
	uint64_t v;

	T_EQ_INT(ibemu_topo_create(&t), 0);
	T_EQ_U64(strtoull(def->keys[IBEMU__K_DEF_MTU].def, NULL, 0),
		 t->defaults.mtu);
	T_EQ_U64(strtoull(def->keys[IBEMU__K_DEF_VLS].def, NULL, 0),
		 t->defaults.vls);
	T_EQ_INT(atoi(def->keys[IBEMU__K_DEF_WIDTH].def), t->defaults.width);
	T_EQ_STR(def->keys[IBEMU__K_DEF_SPEED].def,
		 ibemu_speed_name(t->defaults.speed));
	T_EQ_INT(ibemu__yaml_parse_length(
			 def->keys[IBEMU__K_DEF_CABLE_LENGTH].def, &v),
		 0);
	T_EQ_U64(v, t->defaults.cable_length_mm);
	T_EQ_INT(ibemu__yaml_parse_size(
			 def->keys[IBEMU__K_DEF_BUFFER_PER_VL].def, &v),
		 0);
	T_EQ_U64(v, t->defaults.buffer_per_vl);
	T_EQ_U64(t->defaults.routing_latency_ps, 0);
	ibemu_topo_destroy(t);

	/* Every key of every section has an example in the format's docs. */
	T_EQ_INT(ibemu_file_read(SRC "/topologies/README.md", &readme, &len),
		 0);
	if (!readme)
		return;
	for (s = 0; s < IBEMU__YS_COUNT; s++) {
		const struct ibemu__yaml_section *sec = ibemu__yaml_section(s);

		for (k = 0; k < sec->nkeys; k++) {
			char pat[64];

			if (!sec->keys[k].name)
				continue;
			T_TRUE(sec->keys[k].help && sec->keys[k].def);
			snprintf(pat, sizeof(pat), "%s:", sec->keys[k].name);
			if (!strstr(readme, pat))
				fprintf(stderr, "README.md lacks '%s'\n", pat);
			T_TRUE(strstr(readme, pat) != NULL);
		}
	}
	free(readme);
}

void ibemu_test_register_topo_yaml(void)
{
	static const struct ibemu_test tests[] = {
		{"every_key", test_every_key},
		{"units", test_units},
		{"units_in_model", test_units_in_model},
		{"defaults_inheritance", test_defaults_inheritance},
		{"routing_latency", test_routing_latency},
		{"hca_model", test_hca_model},
		{"hca_tuning", test_hca_tuning},
		{"guids", test_guids},
		{"ip_addresses", test_ip_addresses},
		{"link_errors", test_link_errors},
		{"fabric_name", test_fabric_name},
		{"warnings", test_warnings},
		{"raw_bytes", test_raw_bytes},
		{"roundtrip_files", test_roundtrip_files},
		{"roundtrip_strings", test_roundtrip_strings},
		{"emit_text", test_emit_text},
		{"emit_bytes", test_emit_bytes},
		{"key_tables", test_key_tables},
		{NULL, NULL},
	};

	ibemu_test_add_suite("topo.yaml", tests);
}
