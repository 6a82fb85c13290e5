// SPDX-License-Identifier: MIT
/*
 * The option parser every command shares. A command declares its options
 * once (struct ibemu_opt); this file turns argv into values against that
 * table, applies the defaults the table states, and prints usage and help
 * from it. Errors are one line, prefixed with the command's name.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"

static const char *type_name(const struct ibemu_opt *o)
{
	switch (o->type) {
	case IBEMU_OPT_FLAG:
		return "flag";
	case IBEMU_OPT_STRING:
		return "string";
	case IBEMU_OPT_UINT:
		return "integer";
	case IBEMU_OPT_SIZE:
		return "size";
	case IBEMU_OPT_DURATION:
		return "duration";
	case IBEMU_OPT_FRACTION:
		return "fraction";
	case IBEMU_OPT_ENUM:
		return "one of";
	case IBEMU_OPT_NODE_PORT:
		return "NODE[:PORT]";
	}
	return "?";
}

/* Appends "a, b or c". */
static void list_values(struct ibemu_buf *b, const char *const *values)
{
	size_t i, n = 0;

	while (values[n])
		n++;
	for (i = 0; i < n; i++)
		ibemu_buf_printf(b, "%s%s",
				 i == 0	      ? ""
				 : i + 1 == n ? " or "
					      : ", ",
				 values[i]);
}

/* A decimal or 0x-hex integer with no sign, no blanks, no overflow. */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	int d;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		d = base == 16 ? ibemu_hex_digit(*s)
			       : (*s >= '0' && *s <= '9' ? *s - '0' : -1);
		if (d < 0)
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -ERANGE;
		v = v * base + (uint64_t)d;
	}
	*out = v;
	return 0;
}

static void range_text(const struct ibemu_opt *o, struct ibemu_buf *b)
{
	if (o->range_help) {
		ibemu_buf_puts(b, o->range_help);
		return;
	}
	switch (o->type) {
	case IBEMU_OPT_UINT:
		ibemu_buf_printf(b, "%llu..%llu", (unsigned long long)o->min,
				 (unsigned long long)o->max);
		break;
	case IBEMU_OPT_FRACTION:
		ibemu_buf_printf(b, "%g..%g", o->lo, o->hi);
		break;
	case IBEMU_OPT_ENUM:
		list_values(b, o->values);
		break;
	case IBEMU_OPT_NODE_PORT:
		ibemu_buf_puts(b, "port 0..255");
		break;
	default:
		break;
	}
}

static int bad(const char *cmd, const struct ibemu_opt *o, const char *text,
	       struct ibemu_buf *err, const char *what)
{
	struct ibemu_buf r;

	ibemu_buf_init(&r);
	range_text(o, &r);
	if (o->type == IBEMU_OPT_ENUM)
		ibemu_buf_printf(err, "%s: option '--%s' takes %s, not '%s'",
				 cmd, o->name, r.data ? r.data : "", text);
	else if (r.len && o->type != IBEMU_OPT_NODE_PORT)
		ibemu_buf_printf(err,
				 "%s: option '--%s' takes %s (%s), not '%s'",
				 cmd, o->name, what, r.data, text);
	else
		ibemu_buf_printf(err, "%s: option '--%s' takes %s, not '%s'",
				 cmd, o->name, what, text);
	ibemu_buf_fini(&r);
	return -EINVAL;
}

int ibemu_opt_value_parse(const char *cmd, const struct ibemu_opt *o,
			  const char *text, struct ibemu_opt_val *v,
			  struct ibemu_buf *err)
{
	const char *colon;
	uint64_t u;
	char *end;
	double f;
	size_t i;

	v->s = text;
	v->set = 1;
	switch (o->type) {
	case IBEMU_OPT_FLAG:
		v->u = 1;
		return 0;
	case IBEMU_OPT_STRING:
		if (o->parse && o->parse(text, &v->u))
			return bad(cmd, o, text, err, "a value");
		return 0;
	case IBEMU_OPT_UINT:
		if ((o->parse ? o->parse(text, &u) : parse_u64(text, &u)) ||
		    u < o->min || u > o->max)
			return bad(cmd, o, text, err, "an integer");
		v->u = u;
		return 0;
	case IBEMU_OPT_SIZE:
	case IBEMU_OPT_DURATION:
		IBEMU_BUG_ON(!o->parse);
		if (o->parse(text, &u) ||
		    (u < o->min || (o->max && u > o->max)))
			return bad(cmd, o, text, err,
				   o->type == IBEMU_OPT_SIZE
					   ? "a size such as 4096 or 64KiB"
					   : "a duration such as 50us or 2ms");
		v->u = u;
		return 0;
	case IBEMU_OPT_FRACTION:
		f = strtod(text, &end);
		if (!*text || *end || !isfinite(f) || f < o->lo || f > o->hi)
			return bad(cmd, o, text, err, "a number");
		v->f = f;
		return 0;
	case IBEMU_OPT_ENUM:
		for (i = 0; o->values[i]; i++) {
			if (!strcmp(o->values[i], text)) {
				v->u = i;
				return 0;
			}
		}
		return bad(cmd, o, text, err, "");
	case IBEMU_OPT_NODE_PORT:
		colon = strrchr(text, ':');
		v->name_len = colon ? (size_t)(colon - text) : strlen(text);
		v->has_port = !!colon;
		v->u = 0;
		if (!v->name_len ||
		    (colon && (parse_u64(colon + 1, &u) || u > 255)))
			return bad(cmd, o, text, err,
				   "NODE or NODE:PORT (a port 0..255)");
		if (colon)
			v->u = u;
		return 0;
	}
	return -EINVAL;
}

int ibemu_opt_find(const struct ibemu_opt_cmd *cmd, const char *name,
		   size_t len)
{
	size_t i;

	for (i = 0; i < cmd->nopts; i++)
		if (strlen(cmd->opts[i].name) == len &&
		    !strncmp(cmd->opts[i].name, name, len))
			return (int)i;
	return -1;
}

/* Appends the names of the variants in mask 'only'. */
static void list_variants(const struct ibemu_opt_cmd *cmd, uint32_t only,
			  struct ibemu_buf *b)
{
	size_t i;
	int first = 1;

	for (i = 0; cmd->variants && cmd->variants[i] && i < 32; i++) {
		if (!(only & (1u << i)))
			continue;
		ibemu_buf_printf(b, "%s%s", first ? "" : ", ",
				 cmd->variants[i]);
		first = 0;
	}
}

static int not_for_variant(const struct ibemu_opt_cmd *cmd,
			   const struct ibemu_opt *o, int variant,
			   struct ibemu_buf *err)
{
	ibemu_buf_printf(err,
			 "%s: option '--%s' does not apply to %s '%s' "
			 "(only to ",
			 cmd->name, o->name, cmd->variant_what,
			 cmd->variants[variant]);
	list_variants(cmd, o->only, err);
	ibemu_buf_puts(err, ")");
	return -EINVAL;
}

static int apply_defaults(const struct ibemu_opt_cmd *cmd,
			  struct ibemu_opt_val *vals)
{
	struct ibemu_buf e;
	size_t i;
	int ret = 0;

	ibemu_buf_init(&e);
	for (i = 0; i < cmd->nopts; i++) {
		memset(&vals[i], 0, sizeof(vals[i]));
		if (cmd->opts[i].def && cmd->opts[i].type != IBEMU_OPT_FLAG)
			ret = ibemu_opt_value_parse(cmd->name, &cmd->opts[i],
						    cmd->opts[i].def, &vals[i],
						    &e);
		/* A default the table cannot parse is a bug in the table. */
		IBEMU_BUG_ON(ret);
	}
	ibemu_buf_fini(&e);
	return 0;
}

/*
 * If argv[i] is an option, returns its index and sets *value to the text
 * after '=' (or NULL); returns -1 for an argument, -2 for an unknown
 * option.
 */
static int classify(const struct ibemu_opt_cmd *cmd, const char *arg,
		    const char **value)
{
	const char *name = arg, *eq;
	int bare = 0, k;

	*value = NULL;
	if (!strncmp(arg, "--", 2)) {
		name = arg + 2;
	} else if (arg[0] == '-' && arg[1]) {
		return -2;
	} else if (cmd->bare_names) {
		bare = 1;
	} else {
		return -1;
	}
	eq = strchr(name, '=');
	k = ibemu_opt_find(cmd, name, eq ? (size_t)(eq - name) : strlen(name));
	if (k < 0)
		return bare ? -1 : -2;
	if (eq)
		*value = eq + 1;
	return k;
}

static int find_variant(const struct ibemu_opt_cmd *cmd, const char *name)
{
	int i;

	for (i = 0; cmd->variants[i]; i++)
		if (!strcmp(cmd->variants[i], name))
			return i;
	return -1;
}

/* The first argument names the variant: "which pattern?" and the like. */
static int bad_variant(const struct ibemu_opt_cmd *cmd, const char *name,
		       struct ibemu_buf *err)
{
	if (name)
		ibemu_buf_printf(err, "%s: unknown %s '%s' (expected ",
				 cmd->name, cmd->variant_what, name);
	else
		ibemu_buf_printf(err, "%s: which %s? (", cmd->name,
				 cmd->variant_what);
	list_variants(cmd, UINT32_MAX, err);
	ibemu_buf_printf(err, "; see 'ibemu %s --help')", cmd->name);
	return -EINVAL;
}

int ibemu_opt_parse(const struct ibemu_opt_cmd *cmd, int argc, char **argv,
		    struct ibemu_opt_val *vals, char **args, int *nargs,
		    int *variant, struct ibemu_buf *err)
{
	int i, k, n = 0, ret, v = -1, after_dashes = 0;
	size_t j;

	apply_defaults(cmd, vals);
	for (i = 1; i < argc; i++) {
		const struct ibemu_opt *o;
		const char *value;

		if (!strcmp(argv[i], "--") && !after_dashes) {
			after_dashes = 1;
			continue;
		}
		k = after_dashes ? -1 : classify(cmd, argv[i], &value);
		if (k == -2) {
			const char *eq = strchr(argv[i], '=');

			ibemu_buf_printf(err,
					 "%s: unknown option '%.*s' (see "
					 "'ibemu %s --help')",
					 cmd->name,
					 (int)(eq ? eq - argv[i]
						  : (long)strlen(argv[i])),
					 argv[i], cmd->name);
			return -EINVAL;
		}
		if (k == -1) {
			if (cmd->stop_at_arg) {
				for (; i < argc; i++)
					args[n++] = argv[i];
				break;
			}
			if (cmd->variant_first && v < 0) {
				v = find_variant(cmd, argv[i]);
				if (v < 0)
					return bad_variant(cmd, argv[i], err);
				continue;
			}
			if ((unsigned)n >= cmd->max_args) {
				ibemu_buf_printf(err,
						 "%s: unexpected argument "
						 "'%s'",
						 cmd->name, argv[i]);
				return -EINVAL;
			}
			args[n++] = argv[i];
			continue;
		}
		o = &cmd->opts[k];
		if (vals[k].given) {
			ibemu_buf_printf(err,
					 "%s: option '--%s' is given twice",
					 cmd->name, o->name);
			return -EINVAL;
		}
		if (o->type == IBEMU_OPT_FLAG) {
			if (value) {
				ibemu_buf_printf(err,
						 "%s: option '--%s' takes no "
						 "value",
						 cmd->name, o->name);
				return -EINVAL;
			}
		} else if (!value) {
			/* "--name --foreground": the value is missing, the
			 * next word is an option of its own. */
			if (i + 1 >= argc || (!strncmp(argv[i + 1], "--", 2) &&
					      argv[i + 1][2])) {
				ibemu_buf_printf(err,
						 "%s: option '--%s' needs a "
						 "value",
						 cmd->name, o->name);
				return -EINVAL;
			}
			value = argv[++i];
		}
		memset(&vals[k], 0, sizeof(vals[k]));
		ret = ibemu_opt_value_parse(cmd->name, o, value ? value : "",
					    &vals[k], err);
		if (ret)
			return ret;
		vals[k].given = 1;
	}
	for (j = 0; j < cmd->nopts; j++) {
		if (!vals[j].given || !cmd->opts[j].alone)
			continue;
		if (argc != 2) {
			ibemu_buf_printf(err,
					 "%s: option '--%s' stands alone: "
					 "no %s, argument or other option "
					 "with it",
					 cmd->name, cmd->opts[j].name,
					 cmd->variant_what ? cmd->variant_what
							   : "other");
			return -EINVAL;
		}
		*nargs = 0;
		if (variant)
			*variant = -1;
		return 0;
	}
	if (cmd->variant_first && v < 0)
		return bad_variant(cmd, NULL, err);
	/* Checked once the variant is known, wherever it was written. */
	for (j = 0; j < cmd->nopts && v >= 0; j++)
		if (vals[j].given && cmd->opts[j].only &&
		    !(cmd->opts[j].only & (1u << v)))
			return not_for_variant(cmd, &cmd->opts[j], v, err);
	*nargs = n;
	if (variant)
		*variant = v;
	return 0;
}

static void opt_synopsis(const struct ibemu_opt *o, struct ibemu_buf *out)
{
	ibemu_buf_printf(out, "--%s", o->name);
	if (o->type == IBEMU_OPT_FLAG)
		return;
	if (o->type == IBEMU_OPT_ENUM && !o->metavar) {
		size_t i;

		for (i = 0; o->values[i]; i++)
			ibemu_buf_printf(out, "%s%s", i ? "|" : " ",
					 o->values[i]);
		return;
	}
	ibemu_buf_printf(out, " %s", o->metavar ? o->metavar : "VALUE");
}

void ibemu_opt_usage(const struct ibemu_opt_cmd *cmd, struct ibemu_buf *out)
{
	size_t i;
	int first = 1;

	if (cmd->args && *cmd->args) {
		ibemu_buf_puts(out, cmd->args);
		first = 0;
	}
	for (i = 0; i < cmd->nopts; i++) {
		ibemu_buf_puts(out, first ? "[" : " [");
		opt_synopsis(&cmd->opts[i], out);
		ibemu_buf_puts(out, "]");
		first = 0;
	}
}

void ibemu_opt_help(const struct ibemu_opt_cmd *cmd, struct ibemu_buf *out)
{
	size_t i, start;

	for (i = 0; i < cmd->nopts; i++) {
		const struct ibemu_opt *o = &cmd->opts[i];
		struct ibemu_buf r;

		start = out->len;
		ibemu_buf_puts(out, "  ");
		opt_synopsis(o, out);
		if (out->len - start < 26)
			ibemu_buf_printf(out, "%*s",
					 (int)(26 - (out->len - start)), "");
		else
			ibemu_buf_printf(out, "\n%26s", "");
		ibemu_buf_printf(out, "%s\n%26s(%s", o->help, "", type_name(o));
		ibemu_buf_init(&r);
		range_text(o, &r);
		if (r.len)
			ibemu_buf_printf(out, " %s", r.data);
		ibemu_buf_fini(&r);
		if (o->def)
			ibemu_buf_printf(out, "; default %s", o->def);
		else if (o->def_help)
			ibemu_buf_printf(out, "; default %s", o->def_help);
		if (o->only) {
			ibemu_buf_printf(out, "; %s ", cmd->variant_what);
			list_variants(cmd, o->only, out);
			ibemu_buf_puts(out, " only");
		}
		ibemu_buf_puts(out, ")\n");
	}
}
