// SPDX-License-Identifier: MIT
/*
 * Tests of the ibnetdiscover import and export: ibsim's own example files
 * round trip, a realistic ibnetdiscover output keeps its GUIDs, widths and
 * descriptions, and bad input gets its exact message.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "file.h"
#include "ibnd.h"
#include "unit.h"

#define EXAMPLES_DIR "/usr/share/doc/ibsim-utils/net-examples"
#define SAMPLES_DIR  IBEMU_TEST_SRCDIR "/tests/data/ibnd"

/* Imports NUL-terminated 'text'; returns the topology, or NULL and 'd' says why. */
static struct ibemu_topo *import_text(const char *file, const char *text,
				      struct ibemu_diag *d)
{
	struct ibemu_topo *t = NULL;

	if (ibemu_ibnd_import(file, text, strlen(text), &t, d))
		return NULL;
	return t;
}

/* The error of importing 'text', or "" if it imported. */
static char *import_error(const char *text)
{
	static char msg[1024];
	struct ibemu_topo *t;
	struct ibemu_diag d;

	ibemu_diag_init(&d);
	t = import_text("t.ibnd", text, &d);
	snprintf(msg, sizeof(msg), "%s", d.error ? d.error : "");
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
	return msg;
}

static char *export_text(const struct ibemu_topo *t)
{
	struct ibemu_buf b;

	ibemu_buf_init(&b);
	ibemu_ibnd_export(t, &b);
	T_EQ_INT(b.err, 0);
	return ibemu_buf_steal(&b);
}

/*
 * Compares what the ibnetdiscover format carries; writes the first
 * difference into 'why', or "" when there is none.
 */
static void diff_topo(const struct ibemu_topo *a, const struct ibemu_topo *b,
		      char *why, size_t size)
{
	uint32_t i;
	unsigned p;

	why[0] = '\0';
	if (a->nnodes != b->nnodes || a->nlinks != b->nlinks) {
		snprintf(why, size, "%u nodes %u links vs %u nodes %u links",
			 a->nnodes, a->nlinks, b->nnodes, b->nlinks);
		return;
	}
	if (strcmp(a->name, b->name)) {
		snprintf(why, size, "name %s vs %s", a->name, b->name);
		return;
	}
	for (i = 0; i < a->nnodes; i++) {
		const struct ibemu_topo_node *x = &a->nodes[i];
		uint32_t j = ibemu_topo_find(b, x->name);
		const struct ibemu_topo_node *y;

		if (j == IBEMU_NONE) {
			snprintf(why, size, "node %s missing", x->name);
			return;
		}
		y = &b->nodes[j];
		if (x->type != y->type || x->nports != y->nports ||
		    x->guid != y->guid ||
		    x->sysimage_guid != y->sysimage_guid ||
		    x->vendor_id != y->vendor_id ||
		    x->device_id != y->device_id || strcmp(x->desc, y->desc)) {
			snprintf(why, size, "node %s differs", x->name);
			return;
		}
		for (p = x->type == IBEMU_NODE_SWITCH ? 0 : 1; p <= x->nports;
		     p++) {
			const struct ibemu_topo_port *xp = &x->ports[p];
			const struct ibemu_topo_port *yp = &y->ports[p];
			const struct ibemu_topo_link *xl, *yl;

			if (xp->guid != yp->guid) {
				snprintf(why, size, "GUID of %s[%u]", x->name,
					 p);
				return;
			}
			if (!p || xp->peer_node == IBEMU_NONE) {
				if (yp->peer_node != IBEMU_NONE && p) {
					snprintf(why, size, "%s[%u] cabled",
						 x->name, p);
					return;
				}
				continue;
			}
			if (yp->peer_node == IBEMU_NONE ||
			    strcmp(a->nodes[xp->peer_node].name,
				   b->nodes[yp->peer_node].name) ||
			    xp->peer_port != yp->peer_port) {
				snprintf(why, size, "peer of %s[%u]", x->name,
					 p);
				return;
			}
			xl = &a->links[xp->link];
			yl = &b->links[yp->link];
			if (xl->width != yl->width || xl->speed != yl->speed) {
				snprintf(why, size, "rate of %s[%u]", x->name,
					 p);
				return;
			}
		}
	}
}

/* import -> export -> import -> export: same topology, same text. */
static void check_round_trip(const struct ibemu_topo *t1, const char *what)
{
	struct ibemu_topo *t2;
	struct ibemu_diag d;
	char *text1, *text2, why[256];

	ibemu_diag_init(&d);
	text1 = export_text(t1);
	T_TRUE(text1 != NULL);
	if (!text1)
		return;
	/* Same base name, so that the fabric name survives too. */
	t2 = import_text(what, text1, &d);
	T_EQ_STR(d.error ? d.error : "", "");
	if (t2) {
		diff_topo(t1, t2, why, sizeof(why));
		T_EQ_STR(why, "");
		text2 = export_text(t2);
		T_EQ_STR(text2, text1);
		free(text2);
	}
	ibemu_topo_destroy(t2);
	ibemu_diag_fini(&d);
	free(text1);
}

static void test_examples_round_trip(void)
{
	DIR *dir = opendir(EXAMPLES_DIR);
	struct dirent *e;
	unsigned found = 0;

	T_TRUE(dir != NULL);
	if (!dir)
		return;
	while ((e = readdir(dir))) {
		char path[512];
		struct ibemu_topo *t = NULL;
		struct ibemu_diag d;

		if (strncmp(e->d_name, "net", 3))
			continue;
		found++;
		snprintf(path, sizeof(path), "%s/%s", EXAMPLES_DIR, e->d_name);
		ibemu_diag_init(&d);
		T_EQ_INT(ibemu_ibnd_import_file(path, &t, &d), 0);
		T_EQ_STR(d.error ? d.error : "", "");
		T_EQ_INT(d.nwarnings, 0);
		if (t)
			check_round_trip(t, path);
		ibemu_topo_destroy(t);
		ibemu_diag_fini(&d);
	}
	closedir(dir);
	T_TRUE(found > 0);
}

struct cable {
	const char *a;
	unsigned ap;
	const char *b;
	unsigned bp;
};

/* Is a:ap cabled to b:bp? */
static int cabled(const struct ibemu_topo *t, const struct cable *c)
{
	uint32_t a = ibemu_topo_find(t, c->a), b = ibemu_topo_find(t, c->b);

	return a != IBEMU_NONE && b != IBEMU_NONE &&
	       c->ap <= t->nodes[a].nports &&
	       t->nodes[a].ports[c->ap].peer_node == b &&
	       t->nodes[a].ports[c->ap].peer_port == c->bp;
}

static void test_example_facts(void)
{
	static const struct {
		const char *file;
		unsigned switches, hcas, links, line; /* line: Switch1's */
		struct cable cables[7];
	} ex[] = {
		{"net",
		 2,
		 2,
		 4,
		 25,
		 {{"Switch1", 1, "Hca1", 1},
		  {"Switch1", 2, "Hca2", 2},
		  {"Switch1", 3, "Switch2", 3},
		  {"Switch2", 4, "Switch1", 4}}},
		{"net.1",
		 1,
		 2,
		 2,
		 21,
		 {{"Switch1", 1, "Hca1", 1}, {"Hca2", 1, "Switch1", 4}}},
		{"net.2sw2path",
		 2,
		 2,
		 4,
		 21,
		 {{"Switch1", 3, "Switch2", 3},
		  {"Switch1", 5, "Switch2", 5},
		  {"Switch2", 1, "Hca2", 1}}},
		{"net.2sw2path4hca",
		 2,
		 4,
		 6,
		 21,
		 {{"Switch1", 2, "Hca3", 1},
		  {"Switch2", 2, "Hca4", 1},
		  {"Switch1", 5, "Switch2", 5}}},
		{"net.2sw2path4hca2port",
		 2,
		 2,
		 6,
		 21,
		 {{"Switch1", 3, "Switch2", 3},
		  {"Switch1", 5, "Switch2", 5},
		  {"Hca1", 2, "Switch1", 2},
		  {"Hca2", 1, "Switch2", 1},
		  {"Hca2", 2, "Switch2", 2}}},
	};
	unsigned i, c;

	for (i = 0; i < IBEMU_ARRAY_SIZE(ex); i++) {
		char path[512];
		struct ibemu_topo *t = NULL;
		struct ibemu_diag d;
		uint32_t sw, hca, s1;

		snprintf(path, sizeof(path), "%s/%s", EXAMPLES_DIR, ex[i].file);
		ibemu_diag_init(&d);
		T_EQ_INT(ibemu_ibnd_import_file(path, &t, &d), 0);
		if (!t) {
			ibemu_diag_fini(&d);
			continue;
		}
		ibemu_topo_count(t, &sw, &hca);
		T_EQ_INT(sw, ex[i].switches);
		T_EQ_INT(hca, ex[i].hcas);
		T_EQ_INT(t->nlinks, ex[i].links);
		T_EQ_STR(t->name, "net");
		T_EQ_STR(t->source, path);
		for (c = 0; c < IBEMU_ARRAY_SIZE(ex[i].cables); c++) {
			if (!ex[i].cables[c].a)
				break;
			T_TRUE(cabled(t, &ex[i].cables[c]));
		}
		/* ibsim's files say nothing of rates: the defaults apply. */
		T_EQ_INT(t->links[0].width, 4);
		T_EQ_INT(t->links[0].speed, IBEMU_SPEED_EDR);
		s1 = ibemu_topo_find(t, "Switch1");
		T_TRUE(s1 == 0);
		T_EQ_INT(t->nodes[s1].type, IBEMU_NODE_SWITCH);
		T_EQ_INT(t->nodes[s1].nports, 8);
		T_EQ_STR(t->nodes[s1].desc, "Switch1");
		T_EQ_INT(t->nodes[s1].loc.line, ex[i].line);
		T_EQ_U64(t->nodes[s1].guid, ibemu_topo_derive_guid("Switch1"));
		T_EQ_INT(t->nodes[ibemu_topo_find(t, "Hca1")].nports, 2);
		ibemu_topo_destroy(t);
		ibemu_diag_fini(&d);
	}
}

static const struct ibemu_topo_node *node(const struct ibemu_topo *t,
					  const char *name)
{
	static const struct ibemu_topo_node none;
	uint32_t i = ibemu_topo_find(t, name);

	T_TRUE(i != IBEMU_NONE);
	return i == IBEMU_NONE ? &none : &t->nodes[i];
}

static const struct ibemu_topo_link *link_of(const struct ibemu_topo *t,
					     const char *name, unsigned port)
{
	static const struct ibemu_topo_link none;
	const struct ibemu_topo_node *n = node(t, name);

	if (!n->ports || port > n->nports || n->ports[port].link == IBEMU_NONE)
		return &none;
	return &t->links[n->ports[port].link];
}

static void test_realistic(void)
{
	const char *sw1 = "S-0002c903000a8f6e", *sw2 = "S-7cfe900300a1b2c0";
	const char *h1 = "H-0002c903000b0000", *h2 = "H-248a0703005c1e40";
	const char *h3 = "H-0002c903000c1230", *old = "H-0002c9030001aa00";
	struct ibemu_topo *t = NULL;
	struct ibemu_diag d;
	const struct ibemu_topo_node *n;
	struct cable c = {h3, 2, sw2, 3};

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_ibnd_import_file(SAMPLES_DIR "/realistic.ibnd", &t, &d),
		 0);
	T_EQ_STR(d.error ? d.error : "", "");
	T_EQ_INT(d.nwarnings, 0);
	if (!t)
		goto out;
	T_EQ_STR(t->name, "realistic");
	T_EQ_INT(t->nnodes, 6);
	T_EQ_INT(t->nlinks, 7);

	n = node(t, sw1);
	T_EQ_INT(n->type, IBEMU_NODE_SWITCH);
	T_EQ_INT(n->nports, 36);
	T_EQ_STR(n->desc, "MF0;sw1:SX6036/U1");
	T_EQ_U64(n->guid, 0x2c903000a8f6eull);
	T_EQ_U64(n->sysimage_guid, 0x2c903000a8f6eull);
	T_EQ_U64(n->ports[0].guid, 0x2c903000a8f6eull);
	T_EQ_U64(n->ports[36].guid, 0x2c903000a8f6eull);
	T_EQ_INT(n->vendor_id, 0x2c9);
	T_EQ_INT(n->device_id, 0xc738);
	T_EQ_INT(n->guid_loc.line, 9);
	T_EQ_INT(node(t, sw2)->device_id, 0xcb20);
	T_EQ_STR(node(t, sw2)->desc, "MF0;sw2:MSB7700/U1");

	n = node(t, h1);
	T_EQ_INT(n->type, IBEMU_NODE_HCA);
	T_EQ_INT(n->nports, 2);
	T_EQ_STR(n->desc, "hca1 HCA-1");
	T_EQ_U64(n->guid, 0x2c903000b0000ull);
	T_EQ_U64(n->sysimage_guid, 0x2c903000b0003ull);
	T_EQ_U64(n->ports[1].guid, 0x2c903000b0001ull);
	T_EQ_U64(n->ports[2].guid, 0x2c903000b0002ull); /* derived: guid + 2 */
	T_EQ_INT(n->device_id, 0x1003);
	T_EQ_INT(n->ports[2].peer_node, IBEMU_NONE);
	/* A ConnectX-4 port shares the node's GUID. */
	T_EQ_U64(node(t, h2)->ports[1].guid, 0x248a0703005c1e40ull);
	T_EQ_U64(node(t, h3)->ports[2].guid, 0x2c903000c1232ull);
	T_TRUE(cabled(t, &c));

	T_EQ_INT(link_of(t, h1, 1)->width, 4);
	T_EQ_INT(link_of(t, h1, 1)->speed, IBEMU_SPEED_FDR);
	T_EQ_INT(link_of(t, h2, 1)->speed, IBEMU_SPEED_EDR);
	T_EQ_INT(link_of(t, old, 1)->speed, IBEMU_SPEED_QDR);
	T_EQ_INT(link_of(t, sw1, 35)->speed, IBEMU_SPEED_FDR);
	T_EQ_INT(link_of(t, sw2, 36)->width, 4);
	T_EQ_INT(link_of(t, sw2, 36)->loc.line, 14);
	check_round_trip(t, "realistic.ibnd");
out:
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

static void test_bad_files(void)
{
	static const struct {
		const char *file, *error;
	} bad[] = {
		{"bad-unknown-type.ibnd",
		 "bad-unknown-type.ibnd:5:1: error: unknown node type 'Router':"
		 " expected Switch, Ca or Hca"},
		{"bad-router.ibnd",
		 "bad-router.ibnd:5:1: error: router nodes (Rt) are not"
		 " supported: expected Switch, Ca or Hca"},
		{"bad-unknown-peer.ibnd",
		 "bad-unknown-peer.ibnd:4:5: error: unknown peer \"Hca9\": no"
		 " Switch, Ca or Hca record has this id"},
		{"bad-port-range.ibnd",
		 "bad-port-range.ibnd:4:2: error: port 9 out of range:"
		 " \"Switch1\" has ports 1..8"},
		{"bad-peer-port-range.ibnd",
		 "bad-peer-port-range.ibnd:3:12: error: port 3 out of range:"
		 " \"Hca1\" has ports 1..2"},
		{"bad-disagree.ibnd",
		 "bad-disagree.ibnd:3:1: error: sides disagree: this line"
		 " cables \"Switch1\"[3] to \"Switch2\"[3], but line 6 cables"
		 " \"Switch2\"[3] to \"Switch1\"[4]"},
		{"bad-width.ibnd",
		 "bad-width.ibnd:3:1: error: sides disagree on the width of"
		 " \"sw1\"[1] -- \"sw2\"[1]: 4x on this line, 1x on line 6"},
		{"bad-port-line.ibnd",
		 "bad-port-line.ibnd:3:3: error: expected ']' after the port"
		 " number"},
		{"bad-port-twice.ibnd",
		 "bad-port-twice.ibnd:4:1: error: port 1 of \"Switch1\" listed"
		 " twice (first on line 3)"},
		{"bad-port-count.ibnd",
		 "bad-port-count.ibnd:2:8: error: port count 300 out of range:"
		 " expected 1..254"},
		{"bad-hca-ports.ibnd",
		 "bad-hca-ports.ibnd:2:4: error: port count 10 out of range "
		 "for an HCA: expected 1..9 (rdma-core's libibumad handles "
		 "HCA ports 1..9; UMAD_CA_MAX_PORTS is 10)"},
		{"bad-include.ibnd",
		 "bad-include.ibnd:2:1: error: 'include' is not supported: "
		 "ibemu"
		 " reads one self-contained file, paste the included file in"
		 " its place"},
	};
	unsigned i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(bad); i++) {
		char path[512], *data = NULL;
		size_t len = 0;
		struct ibemu_topo *t = NULL;
		struct ibemu_diag d;

		snprintf(path, sizeof(path), "%s/%s", SAMPLES_DIR, bad[i].file);
		T_EQ_INT(ibemu_file_read(path, &data, &len), 0);
		if (!data)
			continue;
		ibemu_diag_init(&d);
		T_EQ_INT(ibemu_ibnd_import(bad[i].file, data, len, &t, &d),
			 -EINVAL);
		T_TRUE(t == NULL);
		T_EQ_STR(d.error, bad[i].error);
		ibemu_diag_fini(&d);
		free(data);
	}
}

static void test_bad_text(void)
{
	static const struct {
		const char *text, *error;
	} bad[] = {
		{"do echo hi\n",
		 "t.ibnd:1:1: error: 'do' is not supported: ibsim console"
		 " commands cannot run while a topology is read"},
		{"Switch 4 \"s\"\n@1 \"a\"\n",
		 "t.ibnd:2:1: error: ibsim port aliases ('@') are not "
		 "supported"},
		{"Switch 4 \"s\"\n\n[1] \"s\"[2]\n",
		 "t.ibnd:3:1: error: port line outside a node record: port"
		 " lines follow their Switch, Ca or Hca line with no blank"
		 " line between"},
		{"Switch 4 \"s\"\n[1] \"s\"[1]\n",
		 "t.ibnd:2:5: error: port 1 of \"s\" is cabled to itself"},
		{"Switch 4 \"s\"\n[1] \"s\"[0]\n",
		 "t.ibnd:2:9: error: port 0 out of range: \"s\" has ports "
		 "1..4"},
		{"Switch 4 \"s\"\n[99999999999] \"s\"[2]\n",
		 "t.ibnd:2:2: error: port 100000+ out of range: \"s\" has ports"
		 " 1..4"},
		{"Switch 4 \"a\"\n\nSwitch 4 \"a\"\n",
		 "t.ibnd:3:10: error: duplicate node id \"a\" (first declared "
		 "on"
		 " line 1)"},
		{"Switch \"a\"\n",
		 "t.ibnd:1:8: error: expected the port count (1..254) after"
		 " 'Switch'"},
		{"Switch 4 a\n",
		 "t.ibnd:1:10: error: expected the node id in double quotes"},
		{"Switch 4 \"a\n",
		 "t.ibnd:1:10: error: missing the closing '\"' of the node id"
		 " on this line"},
		{"Switch 4 \"a\" x\n", "t.ibnd:1:14: error: unexpected 'x' "
				       "after the node id: expected"
				       " a '#' comment or the end of the line"},
		{"Switch 4 \"a\"\n[1] sw[1]\n",
		 "t.ibnd:2:5: error: expected the peer's node id in double"
		 " quotes"},
		{"Switch 4 \"a\"\n[1] \"b\"[x]\n",
		 "t.ibnd:2:9: error: expected a port number after '['"},
		{"Switch 4 \"a\"\n[1] \"b\"[1] v=2\n",
		 "t.ibnd:2:12: error: unexpected 'v=2' after the peer port:"
		 " expected w=N, s=N or a '#' comment"},
		{"Switch 4 \"a\"\n[1] \"b\"[1] w=32\n",
		 "t.ibnd:2:12: error: bad 'w=32': expected w=N with N a"
		 " LinkWidthEnabled mask 1..31 (1=1x 2=4x 4=8x 8=12x 16=2x)"},
		{"Switch 4 \"a\"\n[1] \"b\"[1] s=8\n",
		 "t.ibnd:2:12: error: bad 's=8': expected s=N with N a"
		 " LinkSpeedEnabled mask 1..7 (1=SDR 2=DDR 4=QDR)"},
		{"Switch 4 \"a\"\n[1](22) \"b\"[1]\n",
		 "t.ibnd:2:4: error: a switch port has no GUID of its own (its"
		 " ports share port 0's GUID, given as switchguid=G(P)): remove"
		 " '(...)'"},
		{"Ca 1 \"a\"\n[1](zz) \"b\"[1]\n",
		 "t.ibnd:2:5: error: expected a hexadecimal GUID after '('"},
		{"Ca 1 \"a\"\n[1](12345678901234567) \"b\"[1]\n",
		 "t.ibnd:2:5: error: GUID out of range: expected at most 64"
		 " bits"},
		{"Ca 1 \"a\"\n[1](12 \"b\"[1]\n",
		 "t.ibnd:2:7: error: expected ')' after the GUID"},
		{"vendid=0x1000000\n",
		 "t.ibnd:1:8: error: vendid 0x1000000 out of range: expected at"
		 " most 0xffffff (24 bits)"},
		{"devid=0x10000\n", "t.ibnd:1:7: error: devid 0x10000 out of "
				    "range: expected at most"
				    " 0xffff (16 bits)"},
		{"caguid=\n",
		 "t.ibnd:1:8: error: expected a number after 'caguid='"},
		{"caguid=0x1 2\n",
		 "t.ibnd:1:12: error: unexpected '2' after the value of caguid:"
		 " expected a '#' comment or the end of the line"},
		{"hcaguids=0x1\n",
		 "t.ibnd:1:1: error: unknown key 'hcaguids': expected vendid,"
		 " devid, sysimgguid, switchguid, caguid, width or speed"},
		{"rtguid=0x1\n",
		 "t.ibnd:1:1: error: router nodes are not supported: expected"
		 " Switch, Ca or Hca records"},
		{"module=\"m\"\n",
		 "t.ibnd:1:1: error: 'module' (ibsim node id prefixes) is not"
		 " supported"},
		{"width=32\n",
		 "t.ibnd:1:7: error: width 32 out of range: expected a"
		 " LinkWidthEnabled mask 1..31"},
		{"Switch 4 \"a\"\nhello world\n",
		 "t.ibnd:2:1: error: unexpected 'hello': expected a node record"
		 " (Switch, Ca or Hca), a port line ([N] \"peer\"[M]), a"
		 " key=value line or a '#' comment"},
		{"# only a comment\n\n",
		 "t.ibnd: error: no node records: expected Switch, Ca or Hca"
		 " lines"},
		{"",
		 "t.ibnd: error: no node records: expected Switch, Ca or Hca"
		 " lines"},
		/* b[1] is claimed by two cables; b lists neither. */
		{"Switch 4 \"a\"\n[1] \"b\"[1]\n[2] \"b\"[1]\n\nSwitch 4 "
		 "\"b\"\n",
		 "t.ibnd:3:5: error: \"b\"[1] is cabled twice: line 2 cables it"
		 " to \"a\"[1], this line to \"a\"[2]"},
		{"Switch 4 \"a\"\n[1] \"b\"[1](22)\n\nCa 1 \"b\"\n[1](23) "
		 "\"a\"[1]\n",
		 "t.ibnd:2:5: error: sides disagree on the port GUID of"
		 " \"b\"[1]: 22 on this line, 23 on line 5"},
		{"Switch 4 \"a\"\n[1] \"b\"[1] s=1\n\nSwitch 4 \"b\"\n[1] "
		 "\"a\"[1] s=6\n",
		 "t.ibnd:2:1: error: sides disagree on the speed of \"a\"[1] --"
		 " \"b\"[1]: SDR on this line, DDR/QDR on line 5"},
		{"caguid=0x10\nCa 2 \"a\"\n\ncaguid=0x12\nCa 2 \"b\"\n",
		 "t.ibnd:4:1: error: duplicate GUID: node 'b' uses a GUID of"
		 " node 'a' (GUIDs must be unique in a fabric)"},
	};
	unsigned i;

	for (i = 0; i < IBEMU_ARRAY_SIZE(bad); i++)
		T_EQ_STR(import_error(bad[i].text), bad[i].error);
	/* A NUL byte is text no format allows. */
	{
		static const char nul[] = "Switch 4 \"a\0\"\n";
		struct ibemu_topo *t = NULL;
		struct ibemu_diag d;

		ibemu_diag_init(&d);
		T_EQ_INT(ibemu_ibnd_import("t.ibnd", nul, sizeof(nul) - 1, &t,
					   &d),
			 -EINVAL);
		T_EQ_STR(d.error, "t.ibnd:1:12: error: unexpected NUL byte:"
				  " expected text");
		ibemu_diag_fini(&d);
	}
}

static void test_names(void)
{
	static const char text[] = "Switch 4 \"leaf 1\"\t# \"\"\n"
				   "[1] \"host:a\"[1]\n"
				   "[2] \"host/a\"[1]\n"
				   "[3] \"leaf_1\"[1]\n"
				   "[4] \"\"[1]\n"
				   "\n"
				   "Hca 1 \"host:a\"\n"
				   "Hca 1 \"host/a\"\n"
				   "Hca 1 \"leaf_1\"\t# spare node lid 4\n"
				   "Hca 1 \"\"\n"
				   "Hca 1 \"host_a-2\"\n";
	struct ibemu_topo *t;
	struct ibemu_diag d;

	ibemu_diag_init(&d);
	t = import_text("dir.x/my fabric.v2.topo", text, &d);
	T_EQ_STR(d.error ? d.error : "", "");
	if (!t)
		goto out;
	/* Valid ids keep their names; others give way and become descriptions. */
	T_EQ_STR(t->name, "my_fabric.v2");
	T_EQ_STR(t->nodes[0].name, "leaf_1-2");
	T_EQ_STR(t->nodes[0].desc, "");
	T_EQ_STR(t->nodes[1].name, "host_a");
	T_EQ_STR(t->nodes[1].desc, "host:a");
	T_EQ_STR(t->nodes[2].name, "host_a-3");
	T_EQ_STR(t->nodes[2].desc, "host/a");
	T_EQ_STR(t->nodes[3].name, "leaf_1");
	T_EQ_STR(t->nodes[3].desc, "spare node");
	T_EQ_STR(t->nodes[4].name, "node");
	T_EQ_STR(t->nodes[4].desc, "");
	T_EQ_STR(t->nodes[5].name, "host_a-2");
	T_EQ_STR(t->nodes[5].desc, "host_a-2");
	T_EQ_INT(t->nodes[0].ports[2].peer_node, 2);
	T_EQ_INT(t->nodes[0].ports[4].peer_node, 4);
	check_round_trip(t, "my_fabric.v2.ibnd");
out:
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

static void test_one_sided_and_later_peer(void)
{
	static const char text[] =
		"# sw lists a cable that h does not, and h is declared later\n"
		"Switch 8 \"sw\"\n"
		"[2] \"h\"[1]\t\t# \"h\" lid 2 2xHDR\n"
		"# a comment inside a record does not end it\n"
		"[3] \"h\"[2] w=9 s=3\n"
		"\n"
		"Ca 2 \"h\"\r\n"
		"[2]\t\"sw\"[3]\t w=15\r\n";
	struct ibemu_topo *t;
	struct ibemu_diag d;

	ibemu_diag_init(&d);
	t = import_text("t.ibnd", text, &d);
	T_EQ_STR(d.error ? d.error : "", "");
	if (!t)
		goto out;
	T_EQ_INT(t->nlinks, 2);
	T_EQ_INT(t->nodes[1].ports[1].peer_port, 2);
	T_EQ_INT(t->links[0].width, 2);
	T_EQ_INT(t->links[0].speed, IBEMU_SPEED_HDR);
	/* w=9 and w=15 both enable 12x and 1x: the widest wins; s=3: DDR. */
	T_EQ_INT(t->links[1].width, 12);
	T_EQ_INT(t->links[1].speed, IBEMU_SPEED_DDR);
	check_round_trip(t, "t.ibnd");
out:
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

static void test_ibsim_keys(void)
{
	/*
	 * ibsim reads switchguid= and caguid= as the first of a series and
	 * width=, speed= and devid= as defaults for what follows.
	 */
	static const char text[] =
		"switchguid=0x100\n"
		"caguid=0x200\n"
		"devid=0x1234\n"
		"width=3\n"
		"speed=1\n"
		"Switch 4 \"s1\"\n[1] \"s2\"[1]\n[2] \"h1\"[1]\n[3] \"h2\"[1] "
		"s=2\n"
		"\n"
		"Switch 4 \"s2\"\n[1] \"s1\"[1]\n\n"
		"Hca 2 \"h1\"\n[1] \"s1\"[2] w=2\n\n"
		"Hca 2 \"h2\" # second host\n[1] \"s1\"[3] s=3\n"
		"devid=0x77\n";
	struct ibemu_topo *t;
	struct ibemu_diag d;

	ibemu_diag_init(&d);
	t = import_text("t.ibnd", text, &d);
	T_EQ_STR(d.error ? d.error : "", "");
	T_EQ_INT(d.nwarnings, 1);
	T_TRUE(d.nwarnings &&
	       !strcmp(d.warnings[0],
		       "t.ibnd:19:1: warning: key lines after"
		       " the last node record apply to no node"));
	if (!t)
		goto out;
	T_EQ_U64(t->nodes[0].guid, 0x100);
	T_EQ_U64(t->nodes[1].guid, 0x101);
	T_EQ_U64(t->nodes[2].guid, 0x200);
	T_EQ_U64(t->nodes[3].guid, 0x203);
	T_EQ_U64(t->nodes[3].ports[2].guid, 0x205);
	T_EQ_INT(t->nodes[3].device_id, 0x1234);
	T_EQ_INT(t->nodes[3].vendor_id, IBEMU_OUI);
	T_EQ_STR(t->nodes[3].desc, "second host");
	T_EQ_INT(link_of(t, "s1", 1)->width, 4);
	T_EQ_INT(link_of(t, "s1", 1)->speed, IBEMU_SPEED_SDR);
	T_EQ_INT(link_of(t, "s1", 3)->speed, IBEMU_SPEED_DDR);
	check_round_trip(t, "t.ibnd");
out:
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

static void test_export_format(void)
{
	static const char expected[] =
		"#\n"
		"# Topology file: fabric \"mini\", written by ibemu\n"
		"# 1 switches, 2 HCAs, 3 links\n"
		"#\n"
		"\n"
		"vendid=0x2ebe0\n"
		"devid=0xeb02\n"
		"sysimgguid=0x1000\n"
		"switchguid=0x1000(1000)\n"
		"Switch\t4 \"sw\"\t\t# \"core \"switch\"\" enhanced port 0 lid "
		"0"
		" lmc 0\n"
		"[1]\t\"h1\"[1](2001) \t\t# \"h1\" lid 0 4xEDR\n"
		"[3]\t\"h2\"[1](3001) \t\t# \"a b\" lid 0 12xHDR\n"
		"\n"
		"vendid=0x2c9\n"
		"devid=0x1017\n"
		"sysimgguid=0x2000\n"
		"caguid=0x2000\n"
		"Ca\t2 \"h1\"\t\t# \"h1\"\n"
		"[1](2001) \t\"sw\"[1]\t\t# lid 0 lmc 0 \"core  switch \" lid 0"
		" 4xEDR\n"
		"[2](2002) \t\"h2\"[2] (3002) \t\t# lid 0 lmc 0 \"a b\" lid 0"
		" 1xSDR\n"
		"\n"
		/* h2 declares no device: hca_model auto, its HDR link's
		 * connectx-6 (docs/hca-model.md). */
		"vendid=0x2ebe0\n"
		"devid=0x101b\n"
		"sysimgguid=0x3000\n"
		"caguid=0x3000\n"
		"Ca\t2 \"h2\"\t\t# \"a=b\"\n"
		"[1](3001) \t\"sw\"[3]\t\t# lid 0 lmc 0 \"core  switch \" lid 0"
		" 12xHDR\n"
		"[2](3002) \t\"h1\"[2] (2002) \t\t# lid 0 lmc 0 \"h1\" lid 0"
		" 1xSDR\n";
	struct ibemu_topo *t;
	struct ibemu_diag d;
	uint32_t sw, h1, h2, l;
	char *text;

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_topo_create(&t), 0);
	T_EQ_INT(ibemu_topo_set_name(t, "mini"), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_SWITCH, "sw", 4, &sw), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "h1", 2, &h1), 0);
	T_EQ_INT(ibemu_topo_add_node(t, IBEMU_NODE_HCA, "h2", 2, &h2), 0);
	T_EQ_INT(ibemu_topo_set_desc(t, sw, "core \"switch\""), 0);
	T_EQ_INT(ibemu_topo_set_desc(t, h2, "a=b"), 0);
	t->nodes[sw].guid = 0x1000;
	t->nodes[h1].guid = 0x2000;
	t->nodes[h1].vendor_id = 0x2c9;
	t->nodes[h1].device_id = 0x1017;
	t->nodes[h2].guid = 0x3000;
	T_EQ_INT(ibemu_topo_connect(t, sw, 1, h1, 1, NULL), 0);
	T_EQ_INT(ibemu_topo_connect(t, h2, 1, sw, 3, &l), 0);
	t->links[l].width = 12;
	t->links[l].speed = IBEMU_SPEED_HDR;
	T_EQ_INT(ibemu_topo_connect(t, h1, 2, h2, 2, &l), 0);
	t->links[l].width = 1;
	t->links[l].speed = IBEMU_SPEED_SDR;
	T_EQ_INT(ibemu_topo_finalize(t, &d), 0);
	text = export_text(t);
	T_EQ_STR(text, expected);
	/* The header keeps quotes in a description; the comments do not. */
	check_round_trip(t, "mini.ibnd");
	free(text);
	ibemu_topo_destroy(t);
	ibemu_diag_fini(&d);
}

/* Deterministic xorshift, so that a failure can be replayed. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Mangles good files at random: nothing may crash or leak (the sanitizer
 * build checks), every failure must say why, and whatever imports must
 * round trip.
 */
static void test_mutations(void)
{
	static const char *const sources[] = {
		SAMPLES_DIR "/realistic.ibnd",
		EXAMPLES_DIR "/net.2sw2path4hca2port",
	};
	static const char alphabet[] = "[]()\"#=\n\t 0123456789xwsSCaHc-@";
	uint64_t seed = 0x1bd5eed;
	unsigned f, iter, ok = 0, failed = 0;

	for (f = 0; f < IBEMU_ARRAY_SIZE(sources); f++) {
		char *orig = NULL;
		size_t len = 0;

		T_EQ_INT(ibemu_file_read(sources[f], &orig, &len), 0);
		if (!orig)
			continue;
		for (iter = 0; iter < 3000; iter++) {
			char *buf = malloc(len + 1);
			size_t n = len, k, edits = 1 + next_rand(&seed) % 4;
			struct ibemu_topo *t = NULL;
			struct ibemu_diag d;

			memcpy(buf, orig, len);
			for (k = 0; k < edits && n; k++) {
				size_t at = next_rand(&seed) % n;
				uint64_t r = next_rand(&seed);

				if (r % 3 == 0)
					buf[at] = alphabet[(r >> 8) %
							   (sizeof(alphabet) -
							    1)];
				else if (r % 3 == 1)
					buf[at] = (char)(r >> 16);
				else
					n = at + (n - at) / 2; /* truncate */
			}
			ibemu_diag_init(&d);
			if (ibemu_ibnd_import("m.ibnd", buf, n, &t, &d)) {
				failed++;
				T_TRUE(d.error != NULL);
			} else {
				ok++;
				check_round_trip(t, "m.ibnd");
			}
			ibemu_topo_destroy(t);
			ibemu_diag_fini(&d);
			free(buf);
		}
		free(orig);
	}
	T_TRUE(ok > 100);
	T_TRUE(failed > 100);
}

static void test_missing_file(void)
{
	struct ibemu_topo *t = NULL;
	struct ibemu_diag d;

	ibemu_diag_init(&d);
	T_EQ_INT(ibemu_ibnd_import_file("/nonexistent/x.ibnd", &t, &d),
		 -ENOENT);
	T_EQ_STR(d.error, "/nonexistent/x.ibnd: error: cannot read the file:"
			  " No such file or directory");
	ibemu_diag_fini(&d);
}

void ibemu_test_register_topo_ibnetdiscover(void)
{
	static const struct ibemu_test tests[] = {
		{"examples_round_trip", test_examples_round_trip},
		{"example_facts", test_example_facts},
		{"realistic", test_realistic},
		{"bad_files", test_bad_files},
		{"bad_text", test_bad_text},
		{"names", test_names},
		{"one_sided_and_later_peer", test_one_sided_and_later_peer},
		{"ibsim_keys", test_ibsim_keys},
		{"export_format", test_export_format},
		{"mutations", test_mutations},
		{"missing_file", test_missing_file},
		{NULL, NULL},
	};

	ibemu_test_add_suite("topo.ibnetdiscover", tests);
}
