/* simhash: Charikar's simhash of a text, 64 bits.  Its features are its
 * words of four bytes or more (maximal runs of letters and digits, ASCII
 * letters lower-cased; any byte of 0x80 and up counts as a letter; shorter
 * words are mostly function words, which every page shares), each counted
 * as often as it occurs, hashed with FNV-1a 64 and mixed with splitmix64's
 * finaliser; bit i is set when more features have it set than not.
 * (SHINGLE > 1 takes runs of that many words as features instead: word
 * 3-shingles flipped 4 to 6 bits for one word changed in a 400-word
 * article, words 0 to 2, unrelated pages 26 to 32 either way.)  Pages
 * whose hashes differ in 3 bits or fewer are near duplicates (sc-parse(1),
 * MAIN TEXT). */
#include "parse/maintext.h"

#include <string.h>

#ifndef MINWORD
#define MINWORD 4
#endif
#ifndef SHINGLE
#define SHINGLE 1
#endif

static bool word_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c >= 0x80;
}

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* FNV-1a 64 of the words w[0..n) (offsets and lengths), a space between. */
static uint64_t shingle(const char *text, const size_t *at, const size_t *len, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t k = 0; k < n; k++) {
		if (k > 0)
			h = (h ^ ' ') * 0x100000001b3ULL;
		for (size_t i = 0; i < len[k]; i++) {
			unsigned char c = (unsigned char)text[at[k] + i];
			if (c >= 'A' && c <= 'Z')
				c = (unsigned char)(c + 32);
			h = (h ^ c) * 0x100000001b3ULL;
		}
	}
	return mix(h);
}

static void count(long *v, uint64_t h)
{
	for (int b = 0; b < 64; b++)
		v[b] += (h >> b) & 1 ? 1 : -1;
}

uint64_t parse_simhash(const char *text, size_t n)
{
	long v[64] = { 0 };
	size_t at[3], len[3], words = 0, i = 0;
	uint64_t first[2] = { 0, 0 };

	while (i < n) {
		while (i < n && !word_byte((unsigned char)text[i]))
			i++;
		if (i >= n)
			break;
		size_t start = i;
		while (i < n && word_byte((unsigned char)text[i]))
			i++;
		if (i - start < MINWORD)
			continue;
		at[0] = at[1], len[0] = len[1];
		at[1] = at[2], len[1] = len[2];
		at[2] = start, len[2] = i - start;
		if (++words >= SHINGLE)
			count(v, shingle(text, at + 3 - SHINGLE, len + 3 - SHINGLE, SHINGLE));
		else
			first[words - 1] = shingle(text, at + 2, len + 2, 1);
	}
	for (size_t k = 0; words < SHINGLE && k < words; k++)
		count(v, first[k]);
	uint64_t h = 0;
	for (int b = 0; b < 64; b++)
		if (v[b] > 0)
			h |= (uint64_t)1 << b;
	return h;
}
