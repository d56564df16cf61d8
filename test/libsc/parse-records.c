/* parse-records: sc-parse through libsc's public API, for test/libsc.bats.
 * Takes sc-parse's specs (-f NAME=SELECTOR, --each SELECTOR, --require
 * NAME, --keep-body), reads records on standard input and writes what
 * sc_parser_apply makes of each, with sc-parse's diagnostics on standard
 * error; exits 3 when a record was made not ok, as sc-parse does.
 * It includes sc.h only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc.h"

int main(int argc, char **argv)
{
	const char *fields[64], *require[64], *each = NULL;
	size_t nfields = 0, nrequire = 0, failed = 0, lineno = 0, cap = 0, outlen;
	unsigned flags = 0;
	char *line = NULL, *out, *err = NULL;
	ssize_t len;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--keep-body") == 0)
			flags |= SC_PARSER_KEEP_BODY;
		else if (i + 1 < argc && strcmp(argv[i], "-f") == 0 && nfields < 64)
			fields[nfields++] = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--require") == 0 && nrequire < 64)
			require[nrequire++] = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--each") == 0)
			each = argv[++i];
		else
			return 2;
	}
	sc_parser *p = sc_parser_new(fields, nfields, each, require, nrequire, flags, &err);
	if (!p) {
		fprintf(stderr, "parse-records: %s\n", err);
		sc_free(err);
		return 2;
	}
	while ((len = getline(&line, &cap, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		lineno++;
		/* Blank lines are no records: sc-parse's reader skips them. */
		if (strspn(line, " \t\r") == (size_t)len)
			continue;
		sc_parser_apply_line(p, line, (size_t)len, lineno, 0, &out, &outlen);
		if (sc_parser_warning(p))
			fprintf(stderr, "parse-records: <stdin>:%zu: %s\n", lineno,
			        sc_parser_warning(p));
		failed += sc_parser_failed(p);
		if (fwrite(out, 1, outlen, stdout) != outlen)
			return 1;
		sc_free(out);
	}
	sc_parser_free(p);
	free(line);
	return failed ? 3 : 0;
}
