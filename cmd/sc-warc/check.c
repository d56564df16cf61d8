/* sc-warc check, cdx and mend: the commands that read a file whole and
 * say something about it. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/signals.h"
#include "core/util.h"
#include "kit/cli.h"
#include "record/metrics.h"
#include "sc-warc.h"
#include "warc/cdx.h"
#include "warc/reader.h"
#include "warc/verify.h"
#include "warc/writer.h"

struct place {
	const char *file;
	uint64_t offset;
	bool bad;
};

static void report_problem(const char *message, void *ctx)
{
	struct place *p = ctx;

	warc_report(p->file, p->offset, message);
	p->bad = true;
}

/* Checks one file; counts its records and the bad ones. */
static void check_file(const char *file, uint64_t *records, uint64_t *bad)
{
	char err[600];
	struct sc_warc_reader *r = sc_warc_reader_open(file, err, sizeof(err));
	struct sc_warc_rec rec;
	struct sc_warc_problem problem;
	enum sc_warc_next next;

	if (!r) {
		sc_warn("%s", err);
		(*bad)++;
		return;
	}
	while (!sc_stop_signal && (next = sc_warc_reader_next(r, &rec, &problem)) != SC_WARC_END) {
		(*records)++;
		if (next == SC_WARC_PROBLEM) {
			warc_report(file, problem.offset, problem.message);
			(*bad)++;
			continue;
		}
		struct place p = { file, rec.offset, false };
		sc_warc_verify(&rec, report_problem, &p);
		if (p.bad)
			(*bad)++;
	}
	sc_warc_reader_close(r);
}

int warc_check(char **files, int nfiles, const struct warc_options *o)
{
	uint64_t records = 0, bad = 0;

	for (int i = 0; i < nfiles && !sc_stop_signal; i++)
		check_file(files[i], &records, &bad);
	if (!o->quiet) {
		json_t *sum = json_pack("{s:i, s:I, s:I}", "files", nfiles, "records",
		                        (json_int_t)records, "bad", (json_int_t)bad);
		sc_metrics_write(stderr, sum);
		json_decref(sum);
	}
	return bad ? SC_EXIT_PARTIAL : SC_EXIT_OK;
}

int warc_cdx(char **files, int nfiles, const struct warc_options *o)
{
	struct sc_buf out;
	int status = SC_EXIT_OK;
	char err[600];

	(void)o;
	sc_buf_init(&out, (size_t)-1 / 2);
	for (int i = 0; i < nfiles && !sc_stop_signal; i++) {
		struct sc_warc_reader *r = sc_warc_reader_open(files[i], err, sizeof(err));
		struct sc_warc_rec rec;
		struct sc_warc_problem problem;
		enum sc_warc_next next;
		const char *slash = strrchr(files[i], '/');
		const char *base = slash ? slash + 1 : files[i];
		if (!r) {
			sc_warn("%s", err);
			status = SC_EXIT_PARTIAL;
			continue;
		}
		struct sc_warc_cdx *index = sc_warc_cdx_new(base, &out);
		while ((next = sc_warc_reader_next(r, &rec, &problem)) != SC_WARC_END) {
			if (next == SC_WARC_PROBLEM) {
				warc_report(files[i], problem.offset, problem.message);
				status = SC_EXIT_PARTIAL;
			} else {
				sc_warc_cdx_add(index, &rec);
			}
		}
		sc_warc_cdx_end(index);
		sc_warc_reader_close(r);
	}
	if (sc_warc_cdx_write_sorted(stdout, out.p, out.len) != 0)
		sc_die_write("error writing standard output:");
	sc_buf_free(&out);
	return status;
}

/* FILE.open cut back to its last whole member and renamed FILE; any
 * other file only cut back. */
static int mend_one(const char *file, const struct warc_options *o)
{
	char err[600];
	uint64_t cut = 0;
	int64_t kept = sc_warc_mend(file, &cut, err, sizeof(err));
	size_t n = strlen(file);

	if (kept < 0) {
		sc_warn("%s", err);
		return -1;
	}
	if (n > 5 && strcmp(file + n - 5, ".open") == 0) {
		char *closed = sc_strndup(file, n - 5);
		int rc = rename(file, closed);
		if (rc != 0)
			sc_warn("cannot rename %s to %s:", file, closed);
		else if (!o->quiet)
			fprintf(stderr, "%s: %s: %lld bytes kept, %llu cut, renamed %s\n",
			        sc_progname, file, (long long)kept, (unsigned long long)cut,
			        closed);
		free(closed);
		return rc;
	}
	if (!o->quiet)
		fprintf(stderr, "%s: %s: %lld bytes kept, %llu cut\n", sc_progname, file,
		        (long long)kept, (unsigned long long)cut);
	return 0;
}

int warc_mend(char **files, int nfiles, const struct warc_options *o)
{
	int status = SC_EXIT_OK;

	for (int i = 0; i < nfiles; i++)
		if (mend_one(files[i], o) != 0)
			status = SC_EXIT_FAILURE;
	return status;
}
