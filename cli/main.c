// SPDX-License-Identifier: MIT
/* Placeholder so the tree builds while the CLI is written. */
int main(void)
{
	return 0;
}
