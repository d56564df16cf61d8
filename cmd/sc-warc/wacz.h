/* sc-warc wacz: a crawl's WARCs packaged as WACZ 1.1.1, the ZIP that
 * ReplayWeb.page and pywb open (sc-warc(1), "WACZ").
 *
 *   wacz.c        the command: the ZIP (libzip), datapackage.json and its
 *                 digest
 *   wacz_index.c  the CDXJ index of the WARCs, and the pages list */
#ifndef SC_WARC_WACZ_H
#define SC_WARC_WACZ_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/strtab.h"
#include "sc-warc.h"

struct wacz {
	struct sc_strtab captures; /* each URL's first capture (wacz_index.c's) */
	struct sc_buf index;       /* the CDXJ lines, unsorted */
	struct sc_buf pages;       /* pages.jsonl, its header line first */
	size_t records, npages, unlisted;
	/* datapackage.json's mainPageUrl and mainPageDate: the page asked for
	 * (want_main, the caller's), else the first page listed; malloced. */
	const char *want_main;
	char *main_url, *main_ts;
};

/* Reads every record of files[0..nfiles): the index lines into z->index
 * and each URL's first capture.  Returns an exit status: a record that
 * cannot be read is PARTIAL (reported), a file that cannot be opened is
 * FAILURE. */
int wacz_read_archives(struct wacz *z, char **files, int nfiles);

/* The pages: every archived 2xx HTML response whose metadata does not
 * mark it a requisite (hop: E), first capture of each URL, in file order. */
void wacz_pages_from_archives(struct wacz *z);

/* The pages: the records of the JSONL file path (a crawl's pages.jsonl)
 * that are archived and not failed, in its order, once each: url, ts (the
 * record's ts or fetched_at, else the capture's), title when the record
 * has one.  Returns an exit status as wacz_read_archives does. */
int wacz_pages_from_records(struct wacz *z, const char *path);

void wacz_free(struct wacz *z);

#endif
