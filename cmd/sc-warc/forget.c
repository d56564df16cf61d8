/* sc-warc forget: a dedupe index (sc-fetch --warc-dedupe) forgets the
 * payloads that the records of some archives hold, before the archives are
 * removed.  crawl.mk's steps call it (share/sc/crawl.sh, warc_forget)
 * rather than reaching into the index's table (lib/warc/dedupe.c). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/signals.h"
#include "core/util.h"
#include "kit/cli.h"
#include "record/metrics.h"
#include "sc-warc.h"
#include "warc/dedupe.h"
#include "warc/reader.h"

/* The WARC-Record-IDs of file's records into *ids (copies), as far as the
 * file can be read: a file cut short by a kill gives its whole records. */
static int collect_ids(const char *file, char ***ids, size_t *n, size_t *cap)
{
	char err[600];
	struct sc_warc_reader *r = sc_warc_reader_open(file, err, sizeof(err));
	struct sc_warc_rec rec;
	struct sc_warc_problem problem;
	enum sc_warc_next next;
	int status = 0;

	if (!r) {
		sc_warn("%s", err);
		return -1;
	}
	while (!sc_stop_signal && (next = sc_warc_reader_next(r, &rec, &problem)) != SC_WARC_END) {
		if (next == SC_WARC_PROBLEM) {
			warc_report(file, problem.offset, problem.message);
			status = -1;
			continue;
		}
		const char *id = sc_warc_get(&rec, "WARC-Record-ID");
		if (!id)
			continue;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 256;
			*ids = sc_realloc(*ids, *cap * sizeof(**ids));
		}
		(*ids)[(*n)++] = sc_strdup(id);
	}
	sc_warc_reader_close(r);
	return status;
}

int warc_forget(const char *index, char **files, int nfiles, const struct warc_options *o)
{
	char err[600];
	char **ids = NULL;
	size_t n = 0, cap = 0;
	long forgotten = 0;
	int status = SC_EXIT_OK;
	struct sc_warc_dedupe *d;

	/* Opening would create it; an index that is not there holds nothing
	 * to forget, and a mistyped name should not pass unseen. */
	if (access(index, F_OK) != 0) {
		sc_warn("%s:", index);
		return SC_EXIT_FAILURE;
	}
	if (!(d = sc_warc_dedupe_open(index, err, sizeof(err)))) {
		sc_warn("%s", err);
		return SC_EXIT_FAILURE;
	}
	for (int i = 0; i < nfiles && !sc_stop_signal; i++)
		if (collect_ids(files[i], &ids, &n, &cap) != 0)
			status = SC_EXIT_PARTIAL;
	if (!sc_stop_signal && (forgotten = sc_warc_dedupe_forget(d, (const char *const *)ids, n,
	                                                          err, sizeof(err))) < 0) {
		sc_warn("%s: %s", index, err);
		status = SC_EXIT_FAILURE;
	}
	sc_warc_dedupe_close(d);
	if (!o->quiet && status != SC_EXIT_FAILURE) {
		json_t *sum = json_pack("{s:i, s:I, s:I}", "files", nfiles, "records",
		                        (json_int_t)n, "forgotten", (json_int_t)forgotten);
		sc_metrics_write(stderr, sum);
		json_decref(sum);
	}
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	return status;
}
