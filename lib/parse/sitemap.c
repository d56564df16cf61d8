/* sitemap: the <loc> URLs of a sitemap (<urlset>) or sitemap index
 * (<sitemapindex>), plain or gzip-compressed XML, for the links field.
 *
 * Whether a body is one is decided by its first element, sniffed from its
 * first bytes (after any XML declaration, processing instructions,
 * comments and doctype), so neither the content type nor the URL needs to
 * say so: servers label sitemaps text/xml, application/xml, text/plain or
 * application/x-gzip alike.  The sniff costs a few bytes per record; only
 * a sitemap is decoded and read whole.
 *
 * The XML is read with libxml2's SAX2 push parser, so a 50 MiB sitemap
 * costs the URLs, not a tree; it never touches the network, expands no
 * entity and loads no DTD.  A gzip body is inflated with
 * zlib up to SITEMAP_MAX_BYTES, the sitemaps.org limit; past it, or at a
 * point where the XML is broken, the URLs read so far are kept. */
#include "parse/parse.h"

#include <libxml/parser.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "core/base64.h"
#include "core/util.h"
#include "record/record.h"

/* The sniff looks this far into the (decoded, inflated) body. */
#define SNIFF_BYTES 4096
/* base64 characters decoded to sniff (a multiple of 4). */
#define SNIFF_B64 8192

static bool parse_has_prefix(const unsigned char *s, size_t n, const char *p)
{
	size_t m = strlen(p);
	return n >= m && memcmp(s, p, m) == 0;
}

static bool is_gzip(const unsigned char *s, size_t n)
{
	return n >= 2 && s[0] == 0x1f && s[1] == 0x8b;
}

/* After what may precede the root element, is it urlset or sitemapindex?
 * Returns the kind, or NULL. */
static const char *root_kind(const unsigned char *s, size_t n)
{
	size_t i = 0;

	if (parse_has_prefix(s, n, "\xef\xbb\xbf"))
		i = 3;
	for (;;) {
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
			i++;
		const char *close = NULL;
		if (parse_has_prefix(s + i, n - i, "<?"))
			close = "?>";
		else if (parse_has_prefix(s + i, n - i, "<!--"))
			close = "-->";
		else if (parse_has_prefix(s + i, n - i, "<!"))
			close = ">";
		if (close && close[0] == '>') {
			/* A doctype's internal subset holds '>'s of its own. */
			const unsigned char *gt = memchr(s + i, '>', n - i);
			const unsigned char *sq = memchr(s + i, '[', n - i);
			if (sq && (!gt || sq < gt))
				close = "]>";
		}
		if (!close)
			break;
		const unsigned char *end = memmem(s + i + 2, n - i - 2, close, strlen(close));
		if (!end)
			return NULL;
		i = (size_t)(end - s) + strlen(close);
	}
	static const char *const kinds[] = { "urlset", "sitemapindex" };
	for (size_t k = 0; k < 2; k++) {
		size_t m = strlen(kinds[k]);
		if (i + 1 + m < n && s[i] == '<' && memcmp(s + i + 1, kinds[k], m) == 0 &&
		    strchr(" \t\r\n>/", s[i + 1 + m]))
			return kinds[k];
	}
	return NULL;
}

/* Inflates a gzip stream (members one after another) into a malloced
 * buffer of at most max bytes; *truncated when there was more. */
static unsigned char *gunzip(const unsigned char *in, size_t n, size_t max, size_t *outlen,
                             bool *truncated)
{
	z_stream z = { 0 };
	size_t cap = n * 4 < max ? (n * 4 > 4096 ? n * 4 : 4096) : max;
	unsigned char *out = sc_malloc(cap + 1);
	size_t len = 0;

	*truncated = false;
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)(n > UINT32_MAX ? UINT32_MAX : n);
	for (;;) {
		if (len == cap) {
			if (cap == max) {
				*truncated = true;
				break;
			}
			cap = cap * 2 < max ? cap * 2 : max;
			out = sc_realloc(out, cap + 1);
		}
		z.next_out = out + len;
		z.avail_out = (uInt)(cap - len);
		int rc = inflate(&z, Z_NO_FLUSH);
		len = cap - z.avail_out;
		if (rc == Z_STREAM_END) {
			if (z.avail_in == 0 || !is_gzip(z.next_in, z.avail_in))
				break;
			inflateReset(&z); /* another member follows */
		} else if (rc != Z_OK) {
			break; /* corrupt or cut short: keep what came out */
		}
	}
	inflateEnd(&z);
	*outlen = len;
	return out;
}

/* The body's bytes: borrowed from the record (body) or malloced into
 * *owned (body_base64), first `limit` base64 characters only when limit
 * is not 0.  NULL when there are none. */
static const unsigned char *body_bytes(const json_t *rec, size_t limit, size_t *n,
                                       unsigned char **owned)
{
	const json_t *body = json_object_get(rec, "body");
	const json_t *body64 = json_object_get(rec, "body_base64");

	*owned = NULL;
	if (json_is_string(body)) {
		*n = json_string_length(body);
		return (const unsigned char *)json_string_value(body);
	}
	if (!json_is_string(body64))
		return NULL;
	size_t len = json_string_length(body64);
	if (limit && len > limit)
		len = limit;
	*owned = sc_base64_decode(json_string_value(body64), len, n);
	return *owned;
}

static bool is_http_url(const char *s)
{
	if (strncasecmp(s, "http://", 7) != 0 && strncasecmp(s, "https://", 8) != 0)
		return false;
	CURLU *u = curl_url();
	if (!u)
		sc_die(1, "out of memory");
	bool ok = curl_url_set(u, CURLUPART_URL, s, 0) == CURLUE_OK;
	curl_url_cleanup(u);
	return ok;
}

/* Adds the trimmed text of a <loc> when it is a new absolute http(s) URL. */
static void add_loc(json_t *links, json_t *seen, const char *text)
{
	static const char ws[] = " \t\r\n";
	size_t start = strspn(text, ws), end = strlen(text);

	while (end > start && strchr(ws, text[end - 1]))
		end--;
	char *url = sc_strndup(text + start, end - start);
	if (is_http_url(url) && !json_object_get(seen, url)) {
		json_object_set_new(seen, url, json_true());
		json_array_append_new(links, json_string(url));
	}
	free(url);
}

/* The SAX reader's state: element depth, the root's namespace, and the
 * text of the <loc> being read. */
struct locs {
	json_t *links, *seen;
	int depth;
	xmlChar *root_ns;
	bool in_loc, loc_too_long;
	struct sc_buf text; /* the <loc> being read, at most MAX_LOC_BYTES */
};

/* Longer <loc> text is no URL anyone serves (sitemaps.org: under 2,048). */
#define MAX_LOC_BYTES (64 * 1024)

static void on_start(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri,
                     int nns, const xmlChar **nss, int nattr, int ndef, const xmlChar **attrs)
{
	struct locs *l = ctx;

	(void)prefix, (void)nns, (void)nss, (void)nattr, (void)ndef, (void)attrs;
	if (l->depth == 0 && !l->root_ns && uri)
		l->root_ns = xmlStrdup(uri);
	/* <loc> as a child of the root's children, in the root's namespace:
	 * <image:loc> and other extensions' locations are not pages. */
	if (l->depth == 2 && xmlStrEqual(local, BAD_CAST "loc") && xmlStrEqual(uri, l->root_ns)) {
		l->in_loc = true;
		l->loc_too_long = false;
		sc_buf_reset(&l->text);
	}
	l->depth++;
}

static void on_end(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri)
{
	struct locs *l = ctx;

	(void)local, (void)prefix, (void)uri;
	l->depth--;
	if (l->depth == 2 && l->in_loc) {
		if (!l->loc_too_long)
			add_loc(l->links, l->seen, l->text.p ? l->text.p : "");
		l->in_loc = false;
	}
}

static void on_text(void *ctx, const xmlChar *s, int n)
{
	struct locs *l = ctx;

	if (!l->in_loc)
		return;
	if (sc_buf_add(&l->text, s, (size_t)n) != 0)
		l->loc_too_long = true;
}

/* Every <loc> URL, read with libxml2's SAX2 push parser in recovery mode,
 * so a broken tag costs the URL it breaks, not the rest of the file.  No
 * handler declares entities, so none is expanded. */
static json_t *read_locs(const unsigned char *xml, size_t n, const char *url)
{
	struct locs l = { .links = json_array(), .seen = json_object() };

	sc_buf_init(&l.text, MAX_LOC_BYTES);
	xmlSAXHandler sax = { .initialized = XML_SAX2_MAGIC,
		              .startElementNs = on_start,
		              .endElementNs = on_end,
		              .characters = on_text,
		              .cdataBlock = on_text };
	xmlParserCtxtPtr ctxt = xmlCreatePushParserCtxt(&sax, &l, NULL, 0, url);

	if (!ctxt || !l.links || !l.seen)
		sc_die(1, "out of memory");
	xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_RECOVER | XML_PARSE_NOERROR |
	                                XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
	for (size_t off = 0; off < n;) {
		size_t chunk = n - off < 65536 ? n - off : 65536;
		if (xmlParseChunk(ctxt, (const char *)xml + off, (int)chunk, 0) != 0 &&
		    ctxt->disableSAX)
			break; /* an error recovery cannot pass */
		off += chunk;
	}
	xmlParseChunk(ctxt, NULL, 0, 1);
	/* A doctype's entity declarations make the parser start a document
	 * of its own to hold them, even with no handler asking for one. */
	if (ctxt->myDoc)
		xmlFreeDoc(ctxt->myDoc);
	xmlFreeParserCtxt(ctxt);
	xmlFree(l.root_ns);
	sc_buf_free(&l.text);
	json_decref(l.seen);
	return l.links;
}

const char *parse_sitemap_links(const json_t *rec, json_t **links, bool *truncated)
{
	unsigned char *owned, *inflated = NULL;
	const unsigned char *s;
	size_t n, sn;
	const char *kind = NULL;

	*links = NULL;
	*truncated = false;
	if (sc_record_failed(rec))
		return NULL;
	/* The sniff, on a prefix. */
	s = body_bytes(rec, SNIFF_B64, &n, &owned);
	if (s && is_gzip(s, n)) {
		bool more;
		inflated = gunzip(s, n, SNIFF_BYTES, &sn, &more);
		if (inflated)
			kind = root_kind(inflated, sn);
	} else if (s) {
		kind = root_kind(s, n < SNIFF_BYTES ? n : SNIFF_BYTES);
	}
	free(owned);
	free(inflated);
	inflated = NULL;
	if (!kind)
		return NULL;

	/* A sitemap: the whole body. */
	s = body_bytes(rec, 0, &n, &owned);
	if (!s)
		return NULL; /* body_base64 not base64 after all: parse_page_load says so */
	if (is_gzip(s, n)) {
		inflated = gunzip(s, n, SITEMAP_MAX_BYTES, &n, truncated);
		s = inflated;
	}
	const json_t *u = json_object_get(rec, "final_url");
	if (!json_is_string(u))
		u = json_object_get(rec, "url");
	if (s)
		*links = read_locs(s, n, json_is_string(u) ? json_string_value(u) : NULL);
	else
		*links = json_array();
	free(owned);
	free(inflated);
	return kind;
}
