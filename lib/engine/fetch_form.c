/* fetch_form: a record's "form" member as the request a browser sends for
 * it (sc-fetch(1), "Forms"; sc-parse --forms writes such records): with
 * method GET the fields are the URL's query, with POST the body, as
 * application/x-www-form-urlencoded (the default enctype) or
 * multipart/form-data (a field {"file": PATH} is that file's bytes).
 * Owns the checks of the members, the encoded body or query, and each
 * multipart transfer's curl_mime (built at the transfer's set-up, freed
 * when its handle is released). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/hex.h"
#include "engine/fetch_engine.h"

static const char urlencoded[] = "application/x-www-form-urlencoded";
static const char multipart[] = "multipart/form-data";

/* A field's value: a string, {"file": PATH} (multipart only), or an array
 * of either (the field repeated, as checked boxes of one name are). */
static const char *value_problem(const json_t *v, bool is_multipart, bool in_array)
{
	if (json_is_string(v))
		return NULL;
	if (json_is_object(v)) {
		const char *path = json_string_value(json_object_get(v, "file"));
		if (!path || json_object_size(v) != 1)
			return "form has a value that is neither a string nor {\"file\": PATH}";
		if (!is_multipart)
			return "form has a file, which only enctype multipart/form-data sends";
		if (access(path, R_OK) != 0)
			return "form has a file that cannot be read";
		return NULL;
	}
	if (json_is_array(v) && !in_array) {
		size_t i;
		json_t *item;
		json_array_foreach(v, i, item)
		{
			const char *p = value_problem(item, is_multipart, true);
			if (p)
				return p;
		}
		return NULL;
	}
	return "form has a value that is neither a string nor {\"file\": PATH}";
}

const char *fetch_form_problem(const json_t *rec)
{
	const json_t *form = json_object_get(rec, "form");
	const json_t *enctype = json_object_get(rec, "enctype");
	const char *key;
	json_t *v;

	if (!form || json_is_null(form)) {
		return enctype && !json_is_null(enctype) ? "enctype without a form" : NULL;
	}
	if (!json_is_object(form))
		return "form is not an object";
	const char *type =
	        enctype && !json_is_null(enctype) ? json_string_value(enctype) : urlencoded;
	if (!type || (strcasecmp(type, urlencoded) != 0 && strcasecmp(type, multipart) != 0))
		return "enctype is neither application/x-www-form-urlencoded nor "
		       "multipart/form-data";
	const json_t *req = json_object_get(rec, "request");
	const json_t *body = req ? json_object_get(req, "body") : NULL;
	if (body && !json_is_null(body))
		return "request.body and form exclude each other";
	json_object_foreach((json_t *)form, key, v)
	{
		const char *p = value_problem(v, strcasecmp(type, multipart) == 0, false);
		if (p)
			return p;
	}
	return NULL;
}

/* application/x-www-form-urlencoded's byte serialisation (the URL
 * standard): ASCII letters, digits and *-._ as they are, a space as +,
 * every other byte %XX. */
static void put_encoded(struct sc_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '*' || c == '-' || c == '.' || c == '_') {
			sc_buf_addc(b, (char)c);
		} else if (c == ' ') {
			sc_buf_addc(b, '+');
		} else {
			sc_buf_addc(b, '%');
			sc_buf_addc(b, sc_hex_digit(c >> 4));
			sc_buf_addc(b, sc_hex_digit(c));
		}
	}
}

static void put_pair(struct sc_buf *b, const char *name, const json_t *v)
{
	if (b->len)
		sc_buf_addc(b, '&');
	put_encoded(b, name, strlen(name));
	sc_buf_addc(b, '=');
	put_encoded(b, json_string_value(v), json_string_length(v));
}

/* The fields, in the record's order, urlencoded (a NUL-terminated string). */
static char *encode(const json_t *form, size_t *len)
{
	struct sc_buf b;
	const char *key;
	json_t *v;

	sc_buf_init(&b, SIZE_MAX);
	json_object_foreach((json_t *)form, key, v)
	{
		if (json_is_array(v)) {
			size_t i;
			json_t *item;
			json_array_foreach(v, i, item)
			{
				put_pair(&b, key, item);
			}
		} else {
			put_pair(&b, key, v);
		}
	}
	return sc_buf_take(&b, len);
}

/* job's URL with its query replaced by query (a form sent with GET, as
 * browsers send it: the action's own query goes). */
static void set_query(struct job *job, const char *query)
{
	CURLU *h = curl_url();
	char *url = NULL;

	if (!h)
		sc_die(1, "out of memory");
	if (curl_url_set(h, CURLUPART_URL, job->url, 0) == CURLUE_OK &&
	    curl_url_set(h, CURLUPART_QUERY, *query ? query : NULL, 0) == CURLUE_OK &&
	    curl_url_get(h, CURLUPART_URL, &url, 0) == CURLUE_OK) {
		free(job->url);
		job->url = sc_strdup(url);
		curl_free(url);
	}
	curl_url_cleanup(h);
}

/* Whether a field's name says it holds a secret: its value is kept out of
 * the output record. */
static bool secret_name(const char *name)
{
	return strcasestr(name, "pass") || strcasestr(name, "pwd") || strcasestr(name, "secret");
}

/* rec's form as the output record keeps it: a secret's value replaced. */
static void redact(json_t *form)
{
	const char *key;
	json_t *v;

	json_object_foreach(form, key, v)
	{
		if (secret_name(key))
			json_object_set_new(form, key, json_string("[redacted]"));
	}
}

void fetch_form_apply(struct job *job, json_t *rec)
{
	json_t *form = json_object_get(rec, "form");
	const char *type = json_string_value(json_object_get(rec, "enctype"));

	if (!form || !json_is_object(form))
		return;
	/* HTML's default method is GET. */
	if (!job->req_method)
		job->req_method = sc_strdup("GET");
	bool get = strcasecmp(job->req_method, "GET") == 0;
	if (!get && type && strcasecmp(type, multipart) == 0) {
		job->form = FETCH_FORM_MULTIPART;
		job->form_fields = json_deep_copy(form);
		job->has_body = true;
	} else {
		size_t len = 0;
		char *encoded = encode(form, &len);
		if (get) {
			set_query(job, encoded);
			free(encoded);
		} else {
			job->form = FETCH_FORM_URLENCODED;
			free(job->req_body);
			job->req_body = encoded;
			job->req_body_len = len;
			job->has_body = true;
		}
	}
	/* The request holds what it sends; the record keeps no secret. */
	redact(form);
}

static void add_part(curl_mime *mime, const char *name, const json_t *v)
{
	curl_mimepart *part = curl_mime_addpart(mime);
	if (!part)
		sc_die(1, "out of memory");
	curl_mime_name(part, name);
	if (json_is_string(v)) {
		curl_mime_data(part, json_string_value(v), json_string_length(v));
		return;
	}
	/* {"file": PATH}: its bytes, named by the path's last part, as a
	 * browser names an upload. */
	const char *path = json_string_value(json_object_get(v, "file"));
	const char *base = strrchr(path, '/');
	curl_mime_filedata(part, path);
	curl_mime_filename(part, base ? base + 1 : path);
}

void fetch_form_setup(struct transfer *xfer, const struct job *job)
{
	const char *key;
	json_t *v;

	if (job->form != FETCH_FORM_MULTIPART)
		return;
	curl_mime *mime = curl_mime_init(xfer->easy);
	if (!mime)
		sc_die(1, "out of memory");
	json_object_foreach((json_t *)job->form_fields, key, v)
	{
		if (json_is_array(v)) {
			size_t i;
			json_t *item;
			json_array_foreach(v, i, item)
			{
				add_part(mime, key, item);
			}
		} else {
			add_part(mime, key, v);
		}
	}
	curl_easy_setopt(xfer->easy, CURLOPT_MIMEPOST, mime);
	xfer->mime = mime;
}

void fetch_form_release(struct transfer *xfer)
{
	curl_mime_free(xfer->mime);
	xfer->mime = NULL;
}
