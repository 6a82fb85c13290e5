// SPDX-License-Identifier: MIT
/*
 * 'ibemu sm status' and 'ibemu sm report': what the fabric's ibemu-sm is
 * doing, and how well the routes it programmed spread traffic. Both read
 * files the SM writes in the fabric's directory (sm.json after every
 * sweep, report.json at every SUBNET UP; sm/status.c, sm/report.c), never
 * the daemon's state: the SM is the one that knows. The files are in the
 * SM's own fixed JSON layout, read here key by key.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include "cli.h"
#include "runtime.h"
#include "table.h"

/* Both subcommands take --json alone. */
static const struct ibemu_opt json_opt[] = {
	{.name = "json",
	 .type = IBEMU_OPT_FLAG,
	 .help = "print JSON instead of aligned text"},
};

static const struct ibemu_opt_cmd status_opts = {
	.name = "sm status",
	.opts = json_opt,
	.nopts = 1,
};

static const struct ibemu_opt_cmd report_opts = {
	.name = "sm report",
	.opts = json_opt,
	.nopts = 1,
};

static const char status_help[] =
	"ibemu-sm's state (master, standby, discovering), priority, routing "
	"engine, LID and pid, a standby's master (LID, port GUID, priority), "
	"the handovers it made, what it found, and its last sweep: heavy or "
	"light, why it ran, its wall time, SMPs, LFT blocks and errors, and "
	"what the last heavy sweep found added or removed";
static const char report_help[] =
	"how the routes ibemu-sm programmed spread traffic: the most and the "
	"mean routes per directed switch-to-switch cable for shift and "
	"all-to-all, next to the even spread, and the path lengths";

/* The text of 'path' (NUL-terminated, the caller frees), or NULL. */
static char *slurp(const char *path)
{
	size_t len = 0, cap = 4096, n;
	char *text = malloc(cap), *grown;
	FILE *f = fopen(path, "re");

	if (!f || !text) {
		if (f)
			fclose(f);
		free(text);
		return NULL;
	}
	while ((n = fread(text + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
			grown = realloc(text, cap * 2);
			if (!grown) {
				free(text);
				fclose(f);
				return NULL;
			}
			text = grown;
			cap *= 2;
		}
	}
	fclose(f);
	text[len] = '\0';
	return text;
}

/* Where the value of "key" begins, searched from 'from'; NULL if absent. */
static const char *value_at(const char *from, const char *key)
{
	char pat[64];
	const char *at;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	at = from ? strstr(from, pat) : NULL;
	return at ? at + strlen(pat) : NULL;
}

static double num(const char *from, const char *key)
{
	const char *at = value_at(from, key);

	return at ? strtod(at, NULL) : 0;
}

static uint64_t unum(const char *from, const char *key)
{
	const char *at = value_at(from, key);

	return at ? strtoull(at, NULL, 10) : 0;
}

/* A number the SM may write as null (no virtual time off ibemu). */
static void real_or_null(struct ibemu_table *t, const char *from,
			 const char *key)
{
	const char *at = value_at(from, key);

	if (!at || !strncmp(at, "null", 4))
		ibemu_table_null(t);
	else
		ibemu_table_real(t, strtod(at, NULL));
}

/*
 * The JSON string at 'at' (its opening quote) into 'out': the escapes the
 * SM writes (\" \\ \u00XX) undone. Returns where it ends, or NULL.
 */
static const char *string_at(const char *at, char *out, size_t len)
{
	size_t n = 0;
	unsigned u;

	if (!at || *at != '"')
		return NULL;
	for (at++; *at && *at != '"'; at++) {
		char c = *at;

		if (c == '\\' && at[1] == 'u' &&
		    sscanf(at + 2, "%4x", &u) == 1) {
			c = (char)u;
			at += 5;
		} else if (c == '\\' && at[1]) {
			c = *++at;
		}
		if (n + 1 < len)
			out[n++] = c;
	}
	out[n] = '\0';
	return *at ? at + 1 : NULL;
}

static void str(const char *from, const char *key, char *out, size_t len)
{
	if (!string_at(value_at(from, key), out, len))
		snprintf(out, len, "?");
}

/* The fabric's paths, once it is selected and runs; or the exit status. */
static int fabric_paths(struct ibemu_cli *cli, const char *cmd, char *name,
			size_t len, struct ibemu_runtime_paths *p)
{
	int ret = ibemu_cli_select(cli, name, len);

	if (ret)
		return ret;
	if (ibemu_runtime_paths(name, p))
		return ibemu_cli_fail(1, "%s: bad fabric name '%s'", cmd, name);
	if (!ibemu_runtime_running(name))
		return ibemu_cli_fail(1, "%s: fabric '%s' is not running", cmd,
				      name);
	return 0;
}

static int parse_json_flag(const struct ibemu_opt_cmd *cmd, int argc,
			   char **argv, int *json)
{
	struct ibemu_opt_val v[1];
	int n, ret;

	ret = ibemu_cli_parse(cmd, argc, argv, v, NULL, &n, NULL);
	*json = ret ? 0 : (int)v[0].u;
	return ret;
}

/* Prints what the table rendered; 0, or 1 if it could not. */
static int print(struct ibemu_buf *b)
{
	if (b->err || !b->data)
		return ibemu_cli_fail(1, "out of memory");
	fputs(b->data, stdout);
	return 0;
}

/* A time of the wall clock as ISO 8601, in UTC. */
static void iso_time(long long at, char *out, size_t len)
{
	time_t t = (time_t)at;
	struct tm tm;

	if (!at || !gmtime_r(&t, &tm) ||
	    !strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, len, "-");
}

/* How much of sm.log's end is read for its last lines. */
#define SM_LOG_TAIL 65536

/*
 * From the end of sm.log at 'path': the line the SM's watcher wrote when
 * the SM ended ('end', "" if none) and the last line before it ('last',
 * the SM's own last word; "" if none). Returns -errno if the log cannot
 * be read (no SM was started).
 */
static int sm_log_tail(const char *path, char *end, size_t elen, char *last,
		       size_t llen)
{
	FILE *f = fopen(path, "re");
	char *text, *line, *next;
	long size;
	size_t n;

	end[0] = last[0] = '\0';
	if (!f)
		return -errno;
	text = malloc(SM_LOG_TAIL + 1);
	if (!text || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 ||
	    fseek(f, size > SM_LOG_TAIL ? size - SM_LOG_TAIL : 0, SEEK_SET)) {
		free(text);
		fclose(f);
		return -EIO;
	}
	n = fread(text, 1, SM_LOG_TAIL, f);
	fclose(f);
	text[n] = '\0';
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!*line)
			continue;
		if (!strncmp(line, IBEMU_SM_END_MARK,
			     strlen(IBEMU_SM_END_MARK)))
			snprintf(end, elen, "%s", line + strlen("ibemu: "));
		else if (!end[0])
			snprintf(last, llen, "%s", line);
	}
	free(text);
	return 0;
}

/*
 * No live SM: why. The watcher's line says how the SM ended and when,
 * with its last log line; no sm.log, no SM was started.
 */
static int sm_gone(const struct ibemu_runtime_paths *p, const char *name,
		   pid_t pid)
{
	char end[512], last[512], gone[64];

	if (sm_log_tail(p->sm_log, end, sizeof(end), last, sizeof(last)))
		return ibemu_cli_fail(1,
				      "sm status: no ibemu-sm was started on "
				      "fabric '%s' ('ibemu up --sm none'; "
				      "another SM may run on it)",
				      name);
	if (pid > 0)
		snprintf(gone, sizeof(gone), "ibemu-sm (pid %ld) is gone",
			 (long)pid);
	else
		snprintf(gone, sizeof(gone), "ibemu-sm is not running");
	/* ibemu_cli_fail() escapes what the log holds. */
	return ibemu_cli_fail(1,
			      "sm status: fabric '%s': %s; its last log "
			      "line: %s (%s)",
			      name, end[0] ? end : gone,
			      last[0] ? last : "(none)", p->sm_log);
}

/*
 * The mount that holds 'path' (the longest mount point that is a prefix
 * of it, from /proc/self/mountinfo): "POINT (TYPE SOURCE)"; "?" if none.
 */
static void mount_of(const char *path, char *out, size_t len)
{
	char line[4096], point[1024], type[64], source[1024];
	size_t best = 0, n;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *dash;

	snprintf(out, len, "?");
	while (f && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT POINT OPTIONS... - TYPE SOURCE ... */
		dash = strstr(line, " - ");
		if (!dash ||
		    sscanf(line, "%*s %*s %*s %*s %1023s", point) != 1 ||
		    sscanf(dash + 3, "%63s %1023s", type, source) != 2)
			continue;
		n = strlen(point);
		if (n < best || strncmp(path, point, n) ||
		    (path[n] != '/' && path[n] && strcmp(point, "/")))
			continue;
		best = n;
		snprintf(out, len, "%s (%s %s)", point, type, source);
	}
	if (f)
		fclose(f);
}

/*
 * Whether sm.json still says what the SM does: not if the runtime
 * directory's filesystem is full (the SM cannot rewrite it, and the file
 * keeps its last whole version), nor if it is older than three sweep
 * periods and 30 s (a heavy sweep of 10,000 HCAs takes 10 s). 'why' gets
 * the reason, naming the disk (a text cell holds 128 bytes: kept short);
 * 0 if fresh.
 */
static int status_stale(const struct ibemu_runtime_paths *p, long long mtime,
			uint64_t sweep_ms, char *why, size_t len)
{
	long long age = (long long)time(NULL) - mtime;
	char disk[2200];
	struct statvfs vfs;

	if (!statvfs(p->dir, &vfs) && vfs.f_bavail == 0) {
		mount_of(p->dir, disk, sizeof(disk));
		snprintf(why, len, "yes: no space left on %s", disk);
		return 1;
	}
	if (sweep_ms && age * 1000 > (long long)(3 * sweep_ms) + 30000) {
		snprintf(why, len,
			 "yes: not rewritten for %lld s, past three sweep "
			 "periods of %llu ms",
			 age, (unsigned long long)sweep_ms);
		return 1;
	}
	return 0;
}

static int sm_status(struct ibemu_cli *cli, int argc, char **argv)
{
	static const struct ibemu_table_col cols[] = {
		{"state", "State", 0},
		{"priority", "Priority", 1},
		{"routing", "Routing", 0},
		{"lid", "SM LID", 1},
		{"pid", "Pid", 1},
		{"master_lid", "Master's LID", 1},
		{"master_guid", "Master's port GUID", 0},
		{"master_priority", "Master's priority", 1},
		{"handovers", "Handovers", 1},
		{"sweep_ms", "Sweep period (ms)", 1},
		{"nodes", "Nodes", 1},
		{"switches", "Switches", 1},
		{"cas", "CAs", 1},
		{"links", "Links", 1},
		{"max_lid", "Max LID", 1},
		{"heavy_sweeps", "Heavy sweeps", 1},
		{"light_sweeps", "Light sweeps", 1},
		{"traps", "Traps", 1},
		{"smps_sent", "SMPs sent", 1},
		{"smps_answered", "SMPs answered", 1},
		{"smps_timed_out", "SMPs timed out", 1},
		{"last_sweep", "Last sweep", 0},
		{"last_sweep_why", "Why", 0},
		{"last_sweep_at", "At", 0},
		{"last_sweep_wall_ms", "Wall time (ms)", 1},
		{"last_sweep_virtual_at_us", "Virtual at (us)", 1},
		{"last_sweep_virtual_us", "Virtual time (us)", 1},
		{"last_sweep_smps", "SMPs", 1},
		{"last_sweep_lft_blocks", "LFT blocks written", 1},
		{"last_sweep_errors", "Errors", 1},
		{"last_heavy_sweep", "Last heavy sweep", 1},
		{"last_heavy_why", "Heavy sweep's why", 0},
		{"nodes_added", "Nodes added", 1},
		{"nodes_removed", "Nodes removed", 1},
		{"links_added", "Links added", 1},
		{"links_removed", "Links removed", 1},
		{"cc", "Congestion control", 0},
		{"cc_configured", "CC ports configured", 1},
		{"cc_sets", "CC Sets sent", 1},
		{"cc_log_reads", "CongestionLog reads", 1},
		{"cc_failed", "CC MADs failed", 1},
		{"cc_switch_events", "Switch marking events", 1},
		{"cc_ca_events", "CA threshold events", 1},
		{"written_at", "Status written at", 0},
		{"stale", "Stale", 0},
	};
	static const struct ibemu_table_col change_cols[] = {
		{"change", "CHANGES IN THE LAST HEAVY SWEEP", 0},
	};
	struct ibemu_runtime_paths p;
	struct ibemu_table t, changes;
	const char *last, *heavy, *at, *cc, *master;
	char name[64], text[256], when[64], stale[2300];
	struct ibemu_buf b;
	struct stat st;
	char *json_text;
	int json, ret;
	pid_t pid;

	ret = parse_json_flag(&status_opts, argc, argv, &json);
	if (!ret)
		ret = fabric_paths(cli, "sm status", name, sizeof(name), &p);
	if (ret)
		return ret;
	json_text = slurp(p.sm_status);
	pid = json_text ? (pid_t)unum(json_text, "pid") : 0;
	if (!json_text || pid <= 0 || (kill(pid, 0) && errno == ESRCH)) {
		free(json_text);
		return sm_gone(&p, name, pid);
	}
	last = value_at(json_text, "last_sweep");
	heavy = value_at(json_text, "last_heavy_sweep");
	ibemu_table_init(&t, "sm", cols, IBEMU_ARRAY_SIZE(cols));
	ibemu_table_row(&t);
	str(json_text, "state", text, sizeof(text));
	ibemu_table_str(&t, text);
	ibemu_table_uint(&t, unum(json_text, "priority"));
	str(json_text, "routing", text, sizeof(text));
	ibemu_table_str(&t, text);
	ibemu_table_uint(&t, unum(json_text, "lid"));
	ibemu_table_uint(&t, (uint64_t)pid);
	master = value_at(json_text, "master");
	if (master) {
		ibemu_table_uint(&t, unum(master, "lid"));
		str(master, "guid", text, sizeof(text));
		ibemu_table_str(&t, text);
		ibemu_table_uint(&t, unum(master, "priority"));
	} else {
		ibemu_table_null(&t);
		ibemu_table_null(&t);
		ibemu_table_null(&t);
	}
	ibemu_table_uint(&t, unum(json_text, "handovers"));
	ibemu_table_uint(&t, unum(json_text, "sweep_ms"));
	ibemu_table_uint(&t, unum(json_text, "nodes"));
	ibemu_table_uint(&t, unum(json_text, "switches"));
	ibemu_table_uint(&t, unum(json_text, "cas"));
	ibemu_table_uint(&t, unum(json_text, "links"));
	ibemu_table_uint(&t, unum(json_text, "max_lid"));
	ibemu_table_uint(&t, unum(json_text, "heavy_sweeps"));
	ibemu_table_uint(&t, unum(json_text, "light_sweeps"));
	ibemu_table_uint(&t, unum(json_text, "traps"));
	ibemu_table_uint(&t, unum(json_text, "sent"));
	ibemu_table_uint(&t, unum(json_text, "answered"));
	ibemu_table_uint(&t, unum(json_text, "timed_out"));
	str(last, "kind", text, sizeof(text));
	ibemu_table_str(&t, text);
	str(last, "why", text, sizeof(text));
	ibemu_table_str(&t, text);
	iso_time((long long)num(last, "at"), when, sizeof(when));
	ibemu_table_str(&t, when);
	ibemu_table_real(&t, num(last, "wall_s") * 1000);
	real_or_null(&t, last, "virtual_at_us");
	real_or_null(&t, last, "virtual_us");
	ibemu_table_uint(&t, unum(last, "smps"));
	ibemu_table_uint(&t, unum(last, "lft_blocks"));
	ibemu_table_uint(&t, unum(last, "errors"));
	ibemu_table_uint(&t, unum(heavy, "number"));
	str(heavy, "why", text, sizeof(text));
	ibemu_table_str(&t, text);
	ibemu_table_uint(&t, unum(heavy, "nodes_added"));
	ibemu_table_uint(&t, unum(heavy, "nodes_removed"));
	ibemu_table_uint(&t, unum(heavy, "links_added"));
	ibemu_table_uint(&t, unum(heavy, "links_removed"));
	/* The CC manager's counts (sm/cc.c), "off" with no policy. */
	cc = value_at(json_text, "cc");
	at = value_at(cc, "enabled");
	ibemu_table_str(&t, at && !strncmp(at, "true", 4) ? "on" : "off");
	ibemu_table_uint(&t, unum(cc, "configured"));
	ibemu_table_uint(&t, unum(cc, "sets"));
	ibemu_table_uint(&t, unum(cc, "gets"));
	ibemu_table_uint(&t, unum(cc, "failed"));
	ibemu_table_uint(&t, unum(cc, "switch_events"));
	ibemu_table_uint(&t, unum(cc, "ca_events"));
	/* What the file says is as old as the file. */
	if (stat(p.sm_status, &st))
		st.st_mtime = 0;
	iso_time((long long)st.st_mtime, when, sizeof(when));
	ibemu_table_str(&t, when);
	if (status_stale(&p, (long long)st.st_mtime,
			 unum(json_text, "sweep_ms"), stale, sizeof(stale)))
		ibemu_table_str(&t, stale);
	else
		ibemu_table_str(&t, "no");
	/* The changes the SM named (the first few), one row each. */
	ibemu_table_init(&changes, "changes", change_cols, 1);
	at = value_at(heavy, "changes");
	at = at && *at == '[' ? at + 1 + strspn(at + 1, " \n") : NULL;
	at = at && *at == '"' ? at : NULL;
	while (at && (at = string_at(at, text, sizeof(text)))) {
		ibemu_table_row(&changes);
		ibemu_table_str(&changes, text);
		at += strspn(at, ", \n");
		if (*at != '"')
			break;
	}
	ibemu_buf_init(&b);
	ibemu_table_render_record_rows(&t, &changes, name, json, &b);
	ret = print(&b);
	ibemu_buf_fini(&b);
	ibemu_table_fini(&changes);
	ibemu_table_fini(&t);
	free(json_text);
	return ret;
}

/*
 * The report of the SM's last heavy sweep: ibemu-sm signals the subnet up
 * before it writes it (its checks take seconds on a large fabric), so a
 * report older than the status file's last heavy sweep, or none yet while
 * an SM runs, is waited for (two minutes at most). NULL if there is none.
 */
static char *report_of_last_sweep(const struct ibemu_runtime_paths *p)
{
	struct timespec pause = {0, 50 * 1000 * 1000};
	char *status, *report;
	unsigned long long want;
	int i;

	for (i = 0;; i++) {
		report = slurp(p->sm_report);
		status = slurp(p->sm_status);
		want = status ? unum(status, "heavy_sweeps") : 0;
		free(status);
		if (!status || i == 2400 ||
		    (report && unum(report, "heavy_sweep") >= want))
			return report;
		free(report);
		nanosleep(&pause, NULL);
	}
}

static int sm_report(struct ibemu_cli *cli, int argc, char **argv)
{
	static const struct ibemu_table_col cols[] = {
		{"routing", "Routing", 0},
		{"heavy_sweep", "Routes of heavy sweep", 1},
		{"hosts", "HCA ports", 1},
		{"links", "Directed switch-to-switch links", 1},
		{"max_lid", "Max LID", 1},
		{"deadlock_free", "Deadlock-free", 0},
		{"layers", "Virtual layers", 1},
		{"shift_max", "Shift: most routes on a link", 1},
		{"shift_mean", "Shift: mean routes per link used", 1},
		{"a2a_max", "All-to-all: most routes on a link", 1},
		{"a2a_mean", "All-to-all: mean routes per link used", 1},
		{"a2a_ideal", "All-to-all: ideal (even on every link)", 1},
		{"a2a_max_over_ideal", "All-to-all: most / ideal", 1},
		{"a2a_links_used", "All-to-all: links used", 1},
		{"unrouted", "Pairs unrouted", 1},
	};
	static const struct ibemu_table_col hop_cols[] = {
		{"hops", "SWITCH HOPS", 1},
		{"pairs", "HCA PAIRS", 1},
	};
	struct ibemu_runtime_paths p;
	struct ibemu_table t, hops;
	char name[64], text[64];
	const char *at;
	struct ibemu_buf b;
	char *json_text, *end;
	double ideal;
	unsigned long long pairs;
	unsigned i;
	int json, ret;

	ret = parse_json_flag(&report_opts, argc, argv, &json);
	if (!ret)
		ret = fabric_paths(cli, "sm report", name, sizeof(name), &p);
	if (ret)
		return ret;
	json_text = report_of_last_sweep(&p);
	if (!json_text)
		return ibemu_cli_fail(1,
				      "sm report: fabric '%s' has no routes "
				      "report: ibemu-sm did not bring it up "
				      "(it was started with '--sm none')",
				      name);
	ibemu_table_init(&t, "report", cols, IBEMU_ARRAY_SIZE(cols));
	ibemu_table_row(&t);
	str(json_text, "routing", text, sizeof(text));
	ibemu_table_str(&t, text);
	ibemu_table_uint(&t, unum(json_text, "heavy_sweep"));
	ibemu_table_uint(&t, unum(json_text, "hosts"));
	ibemu_table_uint(&t, unum(json_text, "links"));
	ibemu_table_uint(&t, unum(json_text, "max_lid"));
	at = value_at(json_text, "deadlock_free");
	ibemu_table_str(&t, at && !strncmp(at, "true", 4) ? "yes" : "no");
	ibemu_table_uint(&t, unum(json_text, "layers"));
	ibemu_table_uint(&t, unum(json_text, "shift_max"));
	ibemu_table_real(&t, num(json_text, "shift_mean"));
	ibemu_table_uint(&t, unum(json_text, "a2a_max"));
	ibemu_table_real(&t, num(json_text, "a2a_mean"));
	ideal = num(json_text, "a2a_ideal");
	ibemu_table_real(&t, ideal);
	if (ideal > 0)
		ibemu_table_real(&t,
				 (double)unum(json_text, "a2a_max") / ideal);
	else
		ibemu_table_null(&t);
	ibemu_table_uint(&t, unum(json_text, "a2a_links_used"));
	ibemu_table_uint(&t, unum(json_text, "unrouted"));
	/* "path_lengths": [n0, n1, ...]: pairs by switch-to-switch hops. */
	ibemu_table_init(&hops, "path_lengths", hop_cols, 2);
	at = value_at(json_text, "path_lengths");
	if (at && *at == '[')
		for (i = 0, at++;; i++) {
			pairs = strtoull(at, &end, 10);
			if (end == at)
				break;
			if (pairs) {
				ibemu_table_row(&hops);
				ibemu_table_uint(&hops, i);
				ibemu_table_uint(&hops, pairs);
			}
			at = end + strspn(end, ", ");
		}
	ibemu_buf_init(&b);
	ibemu_table_render_record_rows(&t, &hops, name, json, &b);
	ret = print(&b);
	ibemu_buf_fini(&b);
	ibemu_table_fini(&hops);
	ibemu_table_fini(&t);
	free(json_text);
	return ret;
}

static const struct {
	const char *name;
	const struct ibemu_opt_cmd *opts;
	const char *help;
	int (*run)(struct ibemu_cli *cli, int argc, char **argv);
} subcommands[] = {
	{"status", &status_opts, status_help, sm_status},
	{"report", &report_opts, report_help, sm_report},
};

static void sm_usage(FILE *f)
{
	fprintf(f,
		"usage: ibemu sm status [--json]   the SM's state and its last "
		"sweep\n"
		"       ibemu sm report [--json]   how its routes spread "
		"traffic\n"
		"'ibemu sm status --help' tells more.\n");
}

int ibemu_cli_sm(struct ibemu_cli *cli, int argc, char **argv)
{
	size_t i;
	int j;

	if (argc < 2)
		return ibemu_cli_fail(2,
				      "sm: which subcommand? usage: ibemu sm "
				      "status|report [--json] (see 'ibemu "
				      "sm --help')");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		sm_usage(stdout);
		return 0;
	}
	for (i = 0; i < IBEMU_ARRAY_SIZE(subcommands); i++) {
		if (strcmp(argv[1], subcommands[i].name))
			continue;
		for (j = 2; j < argc; j++)
			if (!strcmp(argv[j], "--help") ||
			    !strcmp(argv[j], "-h")) {
				ibemu_cli_help(subcommands[i].opts->name,
					       subcommands[i].opts,
					       subcommands[i].help);
				return 0;
			}
		return subcommands[i].run(cli, argc - 1, argv + 1);
	}
	return ibemu_cli_fail(
		2, "sm: unknown subcommand '%s' (status or report)", argv[1]);
}
