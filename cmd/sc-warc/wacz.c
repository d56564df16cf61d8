/* sc-warc wacz OUT.wacz [--pages PAGES.jsonl] FILE...: the WARCs packaged
 * as WACZ 1.1.1 (specs.webrecorder.net/wacz/1.1.1): archive/ with the
 * WARCs, stored (replay tools read a record at its offset, in place),
 * indexes/index.cdx (the CDXJ of sc-warc cdx), pages/pages.jsonl, and
 * datapackage.json naming every file with its sha256 and size, itself
 * hashed in datapackage-digest.json.  The ZIP is written as OUT.tmp and
 * renamed last: a WACZ that exists is whole. */
#include "wacz.h"

#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zip.h>

#include "core/signals.h"
#include "core/util.h"
#include "kit/cli.h"
#include "warc/cdx.h"

/* "sha256:" and the hex digest of n bytes at p, or of the file path
 * (p NULL), into out (72 bytes); *bytes its size.  Returns 0, or -1
 * (errno). */
static int sha256_of(const char *path, const void *p, size_t n, char out[72], uint64_t *bytes)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	int rc = 0;

	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	*bytes = 0;
	if (p) {
		EVP_DigestUpdate(ctx, p, n);
		*bytes = n;
	} else {
		FILE *f = fopen(path, "rb");
		char buf[1 << 16];
		size_t got;
		if (!f) {
			EVP_MD_CTX_free(ctx);
			return -1;
		}
		while ((got = fread(buf, 1, sizeof(buf), f)) > 0) {
			EVP_DigestUpdate(ctx, buf, got);
			*bytes += got;
		}
		if (ferror(f))
			rc = -1;
		(void)fclose(f); /* read only: its errors were ferror's */
	}
	EVP_DigestFinal_ex(ctx, md, &len);
	EVP_MD_CTX_free(ctx);
	static const char hex[] = "0123456789abcdef";
	memcpy(out, "sha256:", 7);
	for (unsigned i = 0; i < len && 7 + 2 * i + 2 < 72; i++) {
		out[7 + 2 * i] = hex[md[i] >> 4];
		out[7 + 2 * i + 1] = hex[md[i] & 15];
	}
	out[7 + 2 * (len < 32 ? len : 32)] = '\0';
	return rc;
}

/* A member of the ZIP: from the file path (stored) or from the bytes at
 * p (deflated; the caller keeps them until zip_close). */
struct member {
	const char *name; /* in the ZIP: archive/..., indexes/..., ... */
	const char *path;
	const char *p;
	size_t n;
};

/* Adds m to za and its resource to the datapackage's list.  Returns 0,
 * or -1 with the reason in err. */
static int add_member(zip_t *za, const struct member *m, json_t *resources, char *err,
                      size_t errlen)
{
	char hash[72];
	uint64_t bytes;
	zip_source_t *src;
	zip_int64_t idx;

	if (sha256_of(m->path, m->p, m->n, hash, &bytes) != 0) {
		snprintf(err, errlen, "%s: cannot read: %s", m->path, strerror(errno));
		return -1;
	}
	src = m->path ? zip_source_file(za, m->path, 0, -1) : zip_source_buffer(za, m->p, m->n, 0);
	if (!src || (idx = zip_file_add(za, m->name, src, ZIP_FL_ENC_UTF_8)) < 0) {
		snprintf(err, errlen, "%s: %s", m->path ? m->path : m->name, zip_strerror(za));
		zip_source_free(src);
		return -1;
	}
	zip_set_file_compression(za, (zip_uint64_t)idx, m->path ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 0);
	if (resources) {
		const char *slash = strrchr(m->name, '/');
		json_array_append_new(resources,
		                      json_pack("{s:s,s:s,s:s,s:I}", "name",
		                                slash ? slash + 1 : m->name, "path", m->name,
		                                "hash", hash, "bytes", (json_int_t)bytes));
	}
	return 0;
}

/* The time now, ISO 8601 with milliseconds, in UTC. */
static void now_iso(char out[32])
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

/* z's index sorted, as sc-warc cdx writes it: malloced, *n bytes. */
static char *sorted_index(struct wacz *z, size_t *n)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, n);

	if (!f || sc_warc_cdx_write_sorted(f, z->index.p ? z->index.p : "", z->index.len) != 0 ||
	    fclose(f) != 0)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	return text;
}

/* The base names of files[0..n) are distinct: archive/ is flat, and the
 * index names each record's file by its base name. */
static void check_names(char **files, int n)
{
	for (int i = 0; i < n; i++) {
		const char *a = strrchr(files[i], '/');
		a = a ? a + 1 : files[i];
		for (int k = 0; k < i; k++) {
			const char *b = strrchr(files[k], '/');
			if (strcmp(a, b ? b + 1 : files[k]) == 0)
				sc_usage_error("wacz: two files named %s (%s, %s): archive/ holds "
				               "each by its name",
				               a, files[k], files[i]);
		}
	}
}

/* Writes the ZIP at tmp.  Returns 0, or -1 with the reason in err. */
static int write_zip(const char *tmp, char **files, int nfiles, struct wacz *z, char *err,
                     size_t errlen)
{
	int zerr;
	zip_t *za = zip_open(tmp, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
	size_t index_n;
	char *index = sorted_index(z, &index_n), created[32], hash[72], *dp = NULL, *dd = NULL;
	json_t *resources = json_array();
	uint64_t bytes;
	int rc = -1;

	if (!za) {
		zip_error_t e;
		zip_error_init_with_code(&e, zerr);
		snprintf(err, errlen, "%s: %s", tmp, zip_error_strerror(&e));
		zip_error_fini(&e);
		goto out;
	}
	for (int i = 0; i < nfiles; i++) {
		const char *slash = strrchr(files[i], '/');
		char name[4096];
		snprintf(name, sizeof(name), "archive/%s", slash ? slash + 1 : files[i]);
		struct member m = { .name = name, .path = files[i] };
		if (add_member(za, &m, resources, err, errlen) != 0)
			goto out;
	}
	struct member index_m = { .name = "indexes/index.cdx", .p = index, .n = index_n };
	struct member pages_m = { .name = "pages/pages.jsonl", .p = z->pages.p, .n = z->pages.len };
	if (add_member(za, &index_m, resources, err, errlen) != 0 ||
	    add_member(za, &pages_m, resources, err, errlen) != 0)
		goto out;
	now_iso(created);
	json_t *package = json_pack("{s:s,s:s,s:s,s:s,s:o}", "profile", "data-package",
	                            "wacz_version", "1.1.1", "created", created, "software",
	                            "sc-warc " SC_VERSION, "resources", json_incref(resources));
	/* The spec's names (py-wacz writes mainPageURL; the spec, browsertrix
	 * and the readers say mainPageUrl). */
	if (z->main_url) {
		json_object_set_new(package, "mainPageUrl", json_string(z->main_url));
		json_object_set_new(package, "mainPageDate", json_string(z->main_ts));
	}
	dp = json_dumps(package, JSON_INDENT(2));
	json_decref(package);
	sha256_of(NULL, dp, strlen(dp), hash, &bytes);
	json_t *digest = json_pack("{s:s,s:s}", "path", "datapackage.json", "hash", hash);
	dd = json_dumps(digest, JSON_INDENT(2));
	json_decref(digest);
	struct member dp_m = { .name = "datapackage.json", .p = dp, .n = strlen(dp) };
	struct member dd_m = { .name = "datapackage-digest.json", .p = dd, .n = strlen(dd) };
	if (add_member(za, &dp_m, NULL, err, errlen) != 0 ||
	    add_member(za, &dd_m, NULL, err, errlen) != 0)
		goto out;
	if (sc_stop_signal) {
		snprintf(err, errlen, "interrupted");
		goto out;
	}
	if (zip_close(za) != 0) {
		snprintf(err, errlen, "%s: %s", tmp, zip_strerror(za));
		goto out;
	}
	za = NULL;
	rc = 0;
out:
	if (za)
		zip_discard(za);
	json_decref(resources);
	free(index);
	free(dp);
	free(dd);
	return rc;
}

int warc_wacz(char **files, int nfiles, const struct warc_options *o)
{
	const char *out = files[0];
	struct wacz z = { 0 };
	char err[4200], *tmp;
	int status;

	files++, nfiles--;
	if (nfiles < 1)
		sc_usage_error("wacz: OUT.wacz and the WARC files to package");
	check_names(files, nfiles);
	z.want_main = o->main_page;
	status = wacz_read_archives(&z, files, nfiles);
	if (status != SC_EXIT_FAILURE && !sc_stop_signal) {
		int st = SC_EXIT_OK;
		if (o->pages)
			st = wacz_pages_from_records(&z, o->pages);
		else
			wacz_pages_from_archives(&z);
		if (st != SC_EXIT_OK)
			status = st;
		if (o->main_page && !z.main_url && status != SC_EXIT_FAILURE) {
			sc_warn("wacz: --main-page %s: not a page of the package (not archived, "
			        "failed, or a requisite)",
			        o->main_page);
			status = SC_EXIT_FAILURE;
		}
	}
	if (status == SC_EXIT_FAILURE || sc_stop_signal) {
		wacz_free(&z);
		return status == SC_EXIT_FAILURE ? status : SC_EXIT_OK;
	}
	if (asprintf(&tmp, "%s.tmp", out) < 0)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	if (write_zip(tmp, files, nfiles, &z, err, sizeof(err)) != 0 ||
	    (rename(tmp, out) != 0 &&
	     snprintf(err, sizeof(err), "cannot rename %s to %s: %s", tmp, out, strerror(errno)))) {
		if (!sc_stop_signal)
			sc_warn("wacz: %s", err);
		unlink(tmp);
		status = SC_EXIT_FAILURE;
	} else if (!o->quiet) {
		json_t *sum =
		        json_pack("{s:s,s:i,s:I,s:I}", "wacz", out, "files", nfiles, "records",
		                  (json_int_t)z.records, "pages", (json_int_t)z.npages);
		if (o->pages)
			json_object_set_new(sum, "unlisted", json_integer((json_int_t)z.unlisted));
		char *text = json_dumps(sum, JSON_COMPACT);
		fprintf(stderr, "%s\n", text);
		free(text);
		json_decref(sum);
	}
	free(tmp);
	wacz_free(&z);
	return status;
}
