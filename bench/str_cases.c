// SPDX-License-Identifier: BSD-2-Clause
/*
 * str-kfuncs' inputs.  The seed's scenarios: the target at 0 of 64 bytes
 * (first), 240 of 512 (middle), 1200 of 1536 (late), absent from 2048
 * (absent; strcmp: equal strings of 2048).  The strings are text over
 * [A-Za-z0-9.-] (a fixed pseudo-random sequence, so the substring search
 * meets the needle's first letters now and then, as in real text), NUL-
 * terminated right after their length, starting 64-byte aligned.
 *   scan       strnchr(s, len, ':'), ':' at the position
 *   comparison strcmp(s1, s2), s2 a copy of s1 differing at the position
 *   span       strcspn(s, ":;, \t\r\n"), ':' at the position
 *   substring  strnstr(s, "Host: benchmark.example.com", len), the needle
 *              starting at the position
 * And the HTTP Host search: strnstr(request, "Host:", len) over an HTTP/1.1
 * GET request of about 800 bytes whose Host header comes last (late), or
 * that has none (absent), placed 66 bytes into a packet (Ethernet, IPv4 and
 * TCP with timestamps), so 2 bytes past a 64-byte boundary.
 * And the substring search's worst cases (table substring-worst, user space
 * only): a needle that matches everywhere but in its last byte, a^32767 b
 * (long) or a^63 b (short), in BSTR_MAX bytes of 'a'; every candidate
 * compares the whole needle, and the last ones run into the NUL (-ENOENT).
 */
#include <errno.h>
#include <string.h>

#include "bench_str.h"

const char bstr_scan_char = ':';
const char bstr_reject[] = ":;, \t\r\n";
const char bstr_needle[] = "Host: benchmark.example.com";
const char bstr_http_needle[] = "Host:";
const size_t bstr_http_offset = 14 + 20 + 32;
const char *const bstr_kfunc[BSTR_NKINDS] = { "strnchr", "strcmp", "strcspn", "strnstr" };

#define CASE_BUF 4096 /* per string: 2048 bytes, a NUL, an offset */
#define KOFF_B 4096   /* where the second string goes in the kernel's buffer */

static char store[BSTR_MAX_CASES][2][CASE_BUF] __attribute__((aligned(64)));
static struct bstr_case cases[BSTR_MAX_CASES];
static int ncases;

static const char alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-";

static void fill_text(char *p, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = alphabet[(x >> 20) & 63];
	}
	p[len] = '\0';
}

static const char *const kind_table[BSTR_NKINDS] = { "scan", "comparison", "span",
						     "substring" };

static void seed_case(enum bstr_kind kind, const char *scenario, size_t bytes, long pos)
{
	struct bstr_case *c = &cases[ncases];
	char *a = store[ncases][0], *b = store[ncases][1];

	fill_text(a, bytes, (uint64_t)ncases + 1);
	c->kind = kind;
	c->table = kind_table[kind];
	c->scenario = scenario;
	c->bytes = bytes;
	c->pos = pos;
	c->a = a;
	c->b = b;
	c->n = bytes;
	c->alen = bytes + 1;
	switch (kind) {
	case BSTR_SCAN:
		c->c = bstr_scan_char;
		if (pos >= 0)
			a[pos] = bstr_scan_char;
		c->expect = pos >= 0 ? (int)pos : -ENOENT;
		b[0] = '\0';
		break;
	case BSTR_CMP:
		memcpy(b, a, bytes + 1);
		if (pos >= 0) {
			a[pos] = 'a';
			b[pos] = 'b';
		}
		c->expect = pos >= 0 ? -1 : 0;
		break;
	case BSTR_SPAN:
		if (pos >= 0)
			a[pos] = ':';
		memcpy(b, bstr_reject, sizeof(bstr_reject));
		c->expect = pos >= 0 ? (int)pos : (int)bytes;
		break;
	default:
		if (pos >= 0)
			memcpy(a + pos, bstr_needle, sizeof(bstr_needle) - 1);
		memcpy(b, bstr_needle, sizeof(bstr_needle));
		c->expect = pos >= 0 ? (int)pos : -ENOENT;
		break;
	}
	c->blen = strlen(b) + 1;
	c->koff_a = 0;
	c->koff_b = KOFF_B;
	ncases++;
}

/* The request's lines; the Host line goes last (or is left out). */
static const char *const http_lines[] = {
	"GET /api/v2/orders/84213/items?expand=product,price&currency=EUR&page=2 HTTP/1.1\r\n",
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n",
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,"
	"image/webp,*/*;q=0.8\r\n",
	"Accept-Language: en-US,en;q=0.5\r\n",
	"Accept-Encoding: gzip, deflate, br, zstd\r\n",
	"Referer: https://shop.example.com/cart?session=7f3a9c&step=checkout\r\n",
	"Cookie: sid=5b2e8f0c1d4a47e9b6c3a2f1e0d9c8b7; theme=dark; "
	"consent=analytics%3Dno%2Cads%3Dno; cart=3; lang=en\r\n",
	"Connection: keep-alive\r\n",
	"Upgrade-Insecure-Requests: 1\r\n",
	"Sec-Fetch-Dest: document\r\n",
	"Sec-Fetch-Mode: navigate\r\n",
	"Sec-Fetch-Site: same-origin\r\n",
	"Sec-Fetch-User: ?1\r\n",
	"Priority: u=0, i\r\n",
	"X-Forwarded-For: 203.0.113.195, 198.51.100.17\r\n",
	"X-Request-Id: 2c9f4e1a-8b7d-4f3e-a6c5-0d1e2f3a4b5c\r\n",
};

static void http_case(const char *scenario, bool with_host)
{
	struct bstr_case *c = &cases[ncases];
	const size_t off = bstr_http_offset % 64;
	char *a = store[ncases][0] + off, *b = store[ncases][1];
	size_t len = 0;
	long pos = -1;

	for (size_t i = 0; i < sizeof(http_lines) / sizeof(http_lines[0]); i++) {
		memcpy(a + len, http_lines[i], strlen(http_lines[i]));
		len += strlen(http_lines[i]);
	}
	if (with_host) {
		static const char host[] = "Host: benchmark.example.com\r\n";

		pos = (long)len;
		memcpy(a + len, host, sizeof(host) - 1);
		len += sizeof(host) - 1;
	}
	memcpy(a + len, "\r\n", 3);
	len += 2;
	memcpy(b, bstr_http_needle, sizeof(bstr_http_needle));
	*c = (struct bstr_case){
		.kind = BSTR_SUBSTR, .table = "http-host", .scenario = scenario, .bytes = len,
		.pos = pos, .a = a, .b = b, .n = len, .expect = pos >= 0 ? (int)pos : -ENOENT,
		.koff_a = (uint32_t)off, .koff_b = KOFF_B, .alen = len + 1,
		.blen = sizeof(bstr_http_needle),
	};
	ncases++;
}

static char worst_hay[BSTR_MAX + 1] __attribute__((aligned(64)));
static char worst_needle[2][BSTR_WORST_LONG + 1] __attribute__((aligned(64)));

static void worst_case(const char *scenario, size_t m)
{
	char *x = worst_needle[m == BSTR_WORST_LONG];

	memset(worst_hay, 'a', BSTR_MAX);
	memset(x, 'a', m - 1);
	x[m - 1] = 'b';
	x[m] = '\0';
	cases[ncases++] = (struct bstr_case){
		.kind = BSTR_SUBSTR, .table = "substring-worst", .scenario = scenario,
		.bytes = BSTR_MAX, .pos = -1, .a = worst_hay, .b = x, .n = BSTR_MAX,
		.expect = -ENOENT, .alen = BSTR_MAX + 1, .blen = m + 1, .worst = true,
	};
}

int bstr_cases(const struct bstr_case **out)
{
	if (!ncases) {
		for (int k = 0; k < BSTR_NKINDS; k++) {
			seed_case((enum bstr_kind)k, "first", 64, 0);
			seed_case((enum bstr_kind)k, "middle", 512, 240);
			seed_case((enum bstr_kind)k, "late", 1536, 1200);
			seed_case((enum bstr_kind)k, k == BSTR_CMP ? "equal" : "absent", 2048, -1);
		}
		http_case("late", true);
		http_case("absent", false);
		worst_case("long", BSTR_WORST_LONG);
		worst_case("short", BSTR_WORST_SHORT);
	}
	*out = cases;
	return ncases;
}
