/* Unit tests for lib/parse/resolve.c: the fast paths of
 * parse_page_resolve (references joined without libcurl) give what
 * libcurl gives, byte for byte, for every kind of reference they take and
 * for those next to them that they must leave to libcurl. */
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"
#include "tap.h"

static const char *const bases[] = {
	"http://docs.example/a/b.html", "http://docs.example/", "http://h/p?q=1#old",
	"https://h:8443/x/y/",          "http://h:81/a/b/c",
};

static const char *const refs[] = {
	/* relative, root-relative, the page's own #name, with fragments */
	"a.html",
	"a.html#x",
	"./#x",
	"../#x",
	"../../../../#x",
	"a#",
	"a##",
	"b/#",
	"./#-",
	"a.html#!x",
	"a#$&'()*+,;=",
	"../a#~x",
	"./b#?q",
	"a#b%20",
	"a#\xc3\xa9",
	"/",
	"/#x",
	"/a?#x",
	"/a?q#x",
	"/x/./y#z",
	"/x#a:b@c/d?e",
	"/p#!$&'()*+,;=:@/?",
	"/p?x=1#y",
	"/p#",
	"/p##",
	"/%7e#x",
	"/a#\xc3\xa9",
	"#",
	"#x",
	"#x#y",
	"#%41",
	"#\xc3\xa9",
	"#!/route",
	"#~a-b.c_d",
	"#A9",
	"#x:y",
	"#a%20",
	"  #x",
	"#x ",
	"?q#x",
	"x?#y",
	"a/../b#c",
	"//h/x#y",
	"mailto:a#b",
	/* absolute */
	"http://example.com",
	"https://example.com/",
	"http://example.com#x",
	"http://example.com/#x",
	"http://example.com/a#!x",
	"http://Example.com/",
	"HTTP://a.com/",
	"http://127.1/",
	"http://127.0.0.1/",
	"http://a.b.c1/",
	"http://a..b/",
	"http://.a/",
	"http://a./",
	"http://-a.com/",
	"http://a-.com/",
	"http://xn--bcher-kva.example/",
	"http://a.com:80/",
	"http://a.com:8080/x",
	"http://u@a.com/",
	"http://a.com?x",
	"http://a.com/?x",
	"http://a.com/p?x#y",
	"http://a.com/p/../q",
	"http://a.com/p/./q",
	"http://a.com//x",
	"http://a.com/%7e",
	"http://a.com/a b",
	"http://1a.com/",
	"http://a.123/",
	"http://a.123a/",
	"http://localhost/",
	"http://a.com/#",
	"http://a.com/x#",
	"http://a.com/x##y",
	"http://a.com/x?",
	"https://docs.python.org/3/library/os.html#os.path",
};

/* What libcurl makes of ref against base, as curl_resolve asks it: the
 * reference set on the base (the page's own "#name" as its fragment),
 * less its fragment if strip_fragment.  Malloced, or NULL. */
static char *by_libcurl(const char *base, const char *ref, bool strip_fragment)
{
	const unsigned flags = CURLU_NON_SUPPORT_SCHEME | CURLU_URLENCODE;
	CURLU *h = curl_url();
	char *out = NULL, *result = NULL;
	CURLUcode rc = curl_url_set(h, CURLUPART_URL, base, 0);

	if (rc == CURLUE_OK && ref[0] == '#')
		rc = curl_url_set(h, CURLUPART_FRAGMENT, ref[1] ? ref + 1 : NULL, CURLU_URLENCODE);
	else if (rc == CURLUE_OK)
		rc = curl_url_set(h, CURLUPART_URL, ref, flags);
	if (rc == CURLUE_OK && strip_fragment)
		rc = curl_url_set(h, CURLUPART_FRAGMENT, NULL, 0);
	if (rc == CURLUE_OK && curl_url_get(h, CURLUPART_URL, &out, 0) == CURLUE_OK && out)
		result = strdup(out);
	curl_free(out);
	curl_url_cleanup(h);
	return result;
}

/* Whether ref is one libcurl reads as parse_page_resolve hands it over:
 * no space to trim, nothing but ASCII (clean_reference spells the rest as
 * sc-fetch requests it, which is not what libcurl alone gives). */
static bool libcurl_reads_as_is(const char *ref)
{
	for (const unsigned char *p = (const unsigned char *)ref; *p; p++)
		if (*p <= ' ' || *p >= 0x7f)
			return false;
	return true;
}

static void test_fast_paths_agree_with_libcurl(void)
{
	int compared = 0, differ = 0;

	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		json_t *rec = json_pack("{s:s}", "url", bases[b]);
		struct page page = { 0 };
		parse_page_locate(&page, rec, NULL);
		ok(page.origin && page.self, "%s: an origin and a self", bases[b]);
		for (size_t r = 0; r < sizeof(refs) / sizeof(refs[0]); r++) {
			if (!libcurl_reads_as_is(refs[r]))
				continue;
			for (int strip = 0; strip < 2; strip++) {
				char *got = parse_page_resolve(&page, refs[r], strip);
				char *want = by_libcurl(bases[b], refs[r], strip);
				compared++;
				if ((got == NULL) != (want == NULL) ||
				    (got && strcmp(got, want) != 0)) {
					differ++;
					printf("# %s + [%s]%s: %s, libcurl %s\n", bases[b], refs[r],
					       strip ? " (no fragment)" : "", got ? got : "NULL",
					       want ? want : "NULL");
				}
				free(got);
				free(want);
			}
		}
		parse_page_free(&page);
		json_decref(rec);
	}
	ok(compared > 500, "%d references compared", compared);
	is_int(differ, 0, "each as libcurl gives it");
}

/* The references the fast paths must leave to libcurl are still made
 * absolute as sc-fetch requests them (a space, non-ASCII). */
static void test_what_libcurl_still_does(void)
{
	json_t *rec = json_pack("{s:s}", "url", "http://docs.example/a/b.html");
	struct page page = { 0 };
	char *s;

	parse_page_locate(&page, rec, NULL);
	s = parse_page_resolve(&page, "  #x ", false);
	is_str(s, "http://docs.example/a/b.html#x", "a fragment with spaces around");
	free(s);
	s = parse_page_resolve(&page, "a b.html#\xc3\xa9", false);
	ok(s && strncmp(s, "http://docs.example/a/a%20b.html#", 33) == 0, "a space: %s", s);
	free(s);
	parse_page_free(&page);
	json_decref(rec);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	test_fast_paths_agree_with_libcurl();
	test_what_libcurl_still_does();
	curl_global_cleanup();
	return tap_done();
}
