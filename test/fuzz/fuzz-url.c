/* libFuzzer target: lib/url, the URL canonicaliser and the pasted-URL
 * encoder, on random text (`make fuzz FUZZ_TARGETS=url`).
 *
 * Input: the text, optionally followed by "\n" and a base URL for
 * resolving it.  Besides memory safety, the promises checked are:
 * - sc_url_from_pasted's output needs no second pass, and where it left a
 *   space or a byte >= 0x80 (only in a host it could not convert) the URL
 *   is refused as canonical;
 * - a canonical URL is http or https, has no fragment, has a path that
 *   begins with '/', and its host is where host_off/host_len say;
 * - canonicalisation is idempotent: the canonical form of a canonical URL
 *   is itself;
 * - the host key and the registrable domain are lower-case and never
 *   longer than the host. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "web/url.h"

static void check_pasted(const char *text, size_t len)
{
	char *once = sc_url_from_pasted(text, len);

	if (!once)
		return;
	char *twice = sc_url_from_pasted(once, strlen(once));
	if (twice)
		fuzz_fail("sc_url_from_pasted is not idempotent: '%s' then '%s'", once, twice);
	/* Only an unconvertible host keeps a space or a non-ASCII byte, and
	 * such a host is no URL. */
	bool plain = true;
	for (const unsigned char *c = (const unsigned char *)once; *c; c++)
		if (*c == ' ' || *c >= 0x80)
			plain = false;
	struct sc_url u;
	char error[256] = "";
	if (!plain && sc_url_canonical(once, NULL, NULL, &u, error, sizeof(error)) == 0)
		fuzz_fail("'%s' keeps a space or non-ASCII, yet is canonical as '%s'", once, u.url);
	free(once);
}

static void check_canonical(const struct sc_url *u)
{
	const char *url = u->url;
	size_t n = strlen(url);

	if (strncmp(url, u->https ? "https://" : "http://", u->https ? 8 : 7) != 0)
		fuzz_fail("not http(s): '%s'", url);
	if (strchr(url, '#'))
		fuzz_fail("a fragment is left: '%s'", url);
	if (u->host_off + u->host_len > n || u->path_off > n || url[u->path_off] != '/')
		fuzz_fail("offsets out of place in '%s'", url);
	for (size_t i = u->host_off; i < u->host_off + u->host_len; i++)
		if (isupper((unsigned char)url[i]))
			fuzz_fail("host not lower-case: '%s'", url);

	struct sc_url again;
	char error[256] = "";
	if (sc_url_canonical(url, NULL, NULL, &again, error, sizeof(error)) != 0)
		fuzz_fail("a canonical URL is refused: '%s' (%s)", url, error);
	if (strcmp(again.url, url) != 0)
		fuzz_fail("not idempotent: '%s' then '%s'", url, again.url);
	sc_url_free(&again);

	char *host = sc_url_host(u);
	char *domain = sc_url_registrable_domain(host);
	if (strlen(domain) > strlen(host))
		fuzz_fail("domain '%s' longer than host '%s'", domain, host);
	free(domain);
	free(host);
	free(sc_url_directory(u));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	const char *base = NULL;
	struct sc_url u;
	char error[256] = "";

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	char *nl = memchr(text, '\n', size);
	if (nl) {
		*nl = '\0';
		base = nl + 1;
	}
	check_pasted(text, strlen(text));
	/* A base must be an absolute URL: skip the resolution with another. */
	if (base && strncmp(base, "http://", 7) != 0 && strncmp(base, "https://", 8) != 0)
		base = NULL;
	if (sc_url_canonical(text, base, NULL, &u, error, sizeof(error)) == 0) {
		check_canonical(&u);
		sc_url_free(&u);
	} else if (!error[0]) {
		fuzz_fail("refused without a reason: '%s'", text);
	}
	free(text);
	return 0;
}
