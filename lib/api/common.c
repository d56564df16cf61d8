/* common: what sc.h's parts share: the version, the return codes' words,
 * sc_free.  (The process-wide set-up is global.c's: a program that only
 * fetches, as sc-fetch, does not load libxml2 for it.) */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"
#include "core/util.h"
#include "core/version.h"

int sc_version_num(void)
{
	return SC_VERSION_NUM;
}

const char *sc_version(void)
{
	return SC_VERSION;
}

const char *sc_strerror(int code)
{
	static const char *const words[] = {
		[SC_OK] = "success",
		[SC_EINVAL] = "bad argument",
		[SC_EBADVALUE] = "value refused",
		[SC_EBUSY] = "fetcher busy (started, or running)",
		[SC_ESYSTEM] = "system error",
		[SC_EBADRECORD] = "malformed record",
		[SC_ETIMEOUT] = "timed out",
	};

	if (code < 0 || (size_t)code >= sizeof(words) / sizeof(words[0]) || !words[code])
		return "unknown error";
	return words[code];
}

void sc_free(void *p)
{
	free(p);
}

char *sc_api_error(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		sc_die(1, "out of memory");
	va_end(ap);
	return s;
}
