/* fetch_global: what every engine of a process shares, set up once and
 * safely when several threads make engines at once: libcurl's global
 * state (curl_global_init is not thread-safe, and its cleanup undoes it
 * for every user), held by a count under a lock: the first holder sets it
 * up, the last one gone cleans it up; and jansson's hash seed, which
 * jansson wants set before threads make objects (sc_record_setup).
 * sc_global_init holds it too, so that fetchers made after it do not set
 * libcurl up again. */
#include <curl/curl.h>
#include <pthread.h>

#include "engine/fetch.h"
#include "record/record.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long holders;

bool fetch_global_hold(void)
{
	bool ok = true;

	sc_record_setup();
	pthread_mutex_lock(&lock);
	if (holders == 0)
		ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
	holders += ok;
	pthread_mutex_unlock(&lock);
	return ok;
}

void fetch_global_release(void)
{
	pthread_mutex_lock(&lock);
	if (holders > 0 && --holders == 0)
		curl_global_cleanup();
	pthread_mutex_unlock(&lock);
}
