/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * str-kfuncs: the string seed's tables (scan = strnchr, comparison = strcmp,
 * span = strcspn, substring = strnstr; first / middle / late / absent) and
 * the HTTP Host search, for bpfmap, glibc, a byte-at-a-time loop and the
 * running kernel's kfuncs.  Shared by:
 *   bench_str.c         columns, calls, interleaved batches, the run
 *   bench_str_report.c  the tables, the targets, JSON
 *   str_cases.c         the inputs of every scenario
 *   str_bytewise.c      the byte-at-a-time loops
 *   bench_str_kernel.c  the kernel's kfuncs, called from tc programs
 */
#ifndef BPFMAP_BENCH_STR_H
#define BPFMAP_BENCH_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The kernel's XATTR_SIZE_MAX: no string is examined past this many bytes. */
#define BSTR_MAX 65536

/* The four kfuncs measured (also the kernel program to run). */
enum bstr_kind {
	BSTR_SCAN,   /* strnchr */
	BSTR_CMP,    /* strcmp */
	BSTR_SPAN,   /* strcspn */
	BSTR_SUBSTR, /* strnstr */
	BSTR_NKINDS,
};

/* One scenario: the arguments of the call, and the answer it must give. */
struct bstr_case {
	enum bstr_kind kind;
	const char *table;    /* "scan", ..., "http-host" */
	const char *scenario; /* "first", "middle", "late", "absent", "equal" */
	size_t bytes;         /* length of the string searched (strcmp: of each) */
	long pos;             /* where the target is, -1 when absent or equal */
	const char *a;        /* s / s1: the haystack */
	const char *b;        /* s2: the needle, the reject set, strcmp's other string */
	size_t n;             /* strnchr's count, strnstr's len */
	char c;               /* strnchr's character */
	int expect;           /* the kernel's answer: index, -ENOENT, or -1/0/1 */
	/* Where the kernel's copies go in its .bss buffer (alignment kept). */
	uint32_t koff_a, koff_b;
	size_t alen, blen;    /* bytes to copy there, NULs included */
	bool worst;           /* an adversarial search: user space only, no targets */
};

/* str_cases.c: builds every scenario once (static storage).  Returns how
 * many; *out points at them. */
#define BSTR_MAX_CASES 24
/* The adversarial searches' haystack: 'a' over BSTR_MAX bytes. */
#define BSTR_WORST_LONG 32768 /* needle a^32767 b */
#define BSTR_WORST_SHORT 64   /* needle a^63 b */
int bstr_cases(const struct bstr_case **out);
/* The fixed arguments, for the tables' headers. */
extern const char bstr_scan_char;   /* strnchr's target */
extern const char bstr_reject[];    /* strcspn's reject set */
extern const char bstr_needle[];    /* strnstr's needle */
extern const char bstr_http_needle[];
extern const size_t bstr_http_offset; /* the request's offset past the packet headers */

/* str_bytewise.c: plain byte-at-a-time loops with the kernel's semantics
 * (results and error codes as bpfmap_str*()). */
int bytewise_strnchr(const char *s, size_t count, char c);
int bytewise_strcmp(const char *s1, const char *s2);
int bytewise_strcspn(const char *s, const char *reject);
int bytewise_strnstr(const char *s1, const char *s2, size_t len);

/* bench_str_kernel.c: the kernel's kfuncs from tc programs run with
 * BPF_PROG_TEST_RUN.  BSTR_NKINDS names the empty program. */
struct bstr_kernel;
#define BSTR_KEMPTY BSTR_NKINDS

/* Load the programs; NULL with the reason in @why when BPF is not permitted
 * or the kernel lacks a kfunc. */
struct bstr_kernel *bstr_kernel_open(char *why, size_t len);
void bstr_kernel_close(struct bstr_kernel *k);
/* Put @c's strings and arguments in the programs' .bss. */
void bstr_kernel_place(struct bstr_kernel *k, const struct bstr_case *c);
/*
 * Run program @prog (a kind, or BSTR_KEMPTY) @repeat times in one test run.
 * Returns 0 with the kernel's mean ns per run in *ns and the kfunc's last
 * result in *ret (0 for the empty program), or -1 with the reason in @why.
 */
int bstr_kernel_run(struct bstr_kernel *k, int prog, uint32_t repeat, double *ns, int *ret,
		    char *why, size_t len);

/* ---- measuring (bench_str.c) and showing (bench_str_report.c) a row ---- */

struct bench;
struct bench_env;
struct str_ops;

#define BSTR_MAX_COLS 16

/* The kfuncs' names without "bpf_": "strnchr", "strcmp", "strcspn", "strnstr". */
extern const char *const bstr_kfunc[BSTR_NKINDS];

struct bcol;
/* Runs @n calls; returns the answer of the last one, as the kfunc gives it. */
typedef int (*batch_fn)(const struct bcol *col, const struct bstr_case *k, uint32_t n);

/* A column of a table, and its figures for the row being measured. */
struct bcol {
	const char *name;     /* column heading */
	const char *backend;  /* JSON: lib, glibc, bytewise, kernel */
	const char *function; /* JSON: what is called */
	batch_fn batch;       /* user space; NULL for the kernel's columns */
	const struct str_ops *ops; /* the --isa columns */
	int kprog;            /* kernel: a kind, or BSTR_KEMPTY */
	bool glibc;           /* a reference for bpfmap/glibc */
	bool isa;             /* an --isa column */
	/* One row's measurement. */
	uint32_t n;           /* calls per batch */
	double *v;            /* ns per call, a figure per round */
	int nv;
	bool ok;
	char error[200];
	double median, best;
};

struct row_run {
	const struct bench_env *env;
	struct bstr_kernel *kern;
	const char *kern_why; /* why there is no kernel column, or NULL */
	struct bcol cols[BSTR_MAX_COLS];
	int ncols;
};

/* What a row shows, from its columns' medians. */
struct row_fig {
	double lib, glibc, kernel, empty, net, r_glibc, r_kernel;
	const char *glibc_name; /* the faster glibc column */
};

/* The target ratios of every row, and the ones missed. */
struct targets {
	double r_glibc[BSTR_MAX_CASES];
	double r_kernel[BSTR_MAX_CASES];
	char missed[2048];
	size_t nmissed;
};

/* bench_str_report.c */
double col_median(const struct bcol *col); /* NAN when not measured */
struct row_fig row_figures(const struct row_run *rr, enum bstr_kind kind);
void print_head(FILE *f, const struct row_run *rr);
void print_row(FILE *f, const struct row_run *rr, const struct bstr_case *c,
	       const struct row_fig *fig);
/* One JSON object per column of the row on stdout, when --json. */
void json_row(const struct bench_env *env, const struct bench *b, const struct row_run *rr,
	      const struct bstr_case *c, const struct row_fig *fig);
void print_targets(FILE *f, struct targets *t, const struct bstr_case *cases, int ncases,
		   bool have_kernel, bool have_glibc);
/* The --isa table: a column per version in @isa (NULL-terminated). */
void print_isa(FILE *f, const struct bstr_case *cases, int ncases,
	       double isa_ns[][BSTR_MAX_COLS], const struct str_ops *const *isa,
	       const double *lib, const double *glibc);

#endif
