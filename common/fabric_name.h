/* SPDX-License-Identifier: MIT */
/*
 * The rule for fabric names. A fabric's name becomes a directory under the
 * runtime root, so it must be one harmless path component; every place a
 * name enters (options, environment, YAML, a file's base name) checks it
 * with this one function.
 */
#ifndef IBEMU_FABRIC_NAME_H
#define IBEMU_FABRIC_NAME_H

/*
 * At most 63 bytes: with "/sess.sock" after it, a runtime root of up to 33
 * bytes still fits the 108 bytes of sun_path (its NUL included).
 */
#define IBEMU_FABRIC_NAME_MAX 63

/* What a valid name may hold, for messages and help. */
#define IBEMU_FABRIC_NAME_RULE                                              \
	"1 to 63 letters, digits, '_', '-', '.' or '+', not starting with " \
	"'.' or '-'"

/*
 * Checks 'name' against the rule. Returns 0, or -EINVAL with *why (a
 * static string, never NULL then) saying what is wrong with it.
 */
int ibemu_fabric_name_check(const char *name, const char **why);

#endif
