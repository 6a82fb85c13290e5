// SPDX-License-Identifier: MIT
/*
 * The one CUnit runner. Every tests/test-<concept>.c registers one suite;
 * the list comes from the file names (suites.h, generated), so there is no
 * second list to keep in step. 'ibemu-unit SUITE' runs one suite (ctest runs
 * each alone), 'ibemu-unit' runs them all.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

void ibemu_test_add_suite(const char *name, const struct ibemu_test *tests)
{
	CU_pSuite suite = CU_add_suite(name, NULL, NULL);

	if (!suite) {
		fprintf(stderr, "cannot add suite %s\n", name);
		exit(2);
	}
	for (; tests->name; tests++)
		CU_add_test(suite, tests->name, tests->fn);
}

int main(int argc, char **argv)
{
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
#define IBEMU_SUITE(name) ibemu_test_register_##name();
#include "suites.h"
#undef IBEMU_SUITE
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (argc > 1) {
		CU_pSuite suite = CU_get_suite(argv[1]);

		if (!suite) {
			fprintf(stderr, "no suite named '%s'\n", argv[1]);
			CU_cleanup_registry();
			return 2;
		}
		CU_basic_run_suite(suite);
	} else {
		CU_basic_run_tests();
	}
	failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	if (CU_get_run_summary()->nTestsRun == 0)
		failed = 1; /* a suite that runs nothing proves nothing */
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
