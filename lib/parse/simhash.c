/* simhash: Charikar's simhash of a text, 64 bits.  Its features are its
 * words of four bytes or more (maximal runs of letters and digits, ASCII
 * letters lower-cased; any byte of 0x80 and up counts as a letter; shorter
 * words are mostly function words, which every page shares), each counted
 * as often as it occurs, hashed with FNV-1a 64 and mixed with splitmix64's
 * finaliser; bit i is set when more features have it set than not.
 * (Word 3-shingles as features flipped 4 to 6 bits for one word changed in
 * a 400-word article, words 0 to 2; unrelated pages differ in 26 to 32
 * either way.)  Pages
 * whose hashes differ in 3 bits or fewer are near duplicates (sc-parse(1),
 * MAIN TEXT). */
#include "parse/maintext.h"

#include <string.h>

/* The shortest word that is a feature. */
#define MINWORD 4

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

/* A word's feature: FNV-1a 64 of it, ASCII lower-cased, mixed. */
static uint64_t feature(const char *w, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)w[i];
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c + 32);
		h = (h ^ c) * 0x100000001b3ULL;
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
	size_t i = 0;

	while (i < n) {
		while (i < n && !word_byte((unsigned char)text[i]))
			i++;
		size_t start = i;
		while (i < n && word_byte((unsigned char)text[i]))
			i++;
		if (i - start >= MINWORD)
			count(v, feature(text + start, i - start));
	}
	uint64_t h = 0;
	for (int b = 0; b < 64; b++)
		if (v[b] > 0)
			h |= (uint64_t)1 << b;
	return h;
}
