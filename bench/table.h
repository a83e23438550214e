/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tables in the seeds' layout: a title, rows (small/medium/large, or hash
 * functions), a column per key size, right-aligned figures:
 *
 *   bpfmap:
 *                          key size (bytes)
 *                       4        8       16
 *     small         89.45    91.21   103.40
 */
#ifndef BPFMAP_BENCH_TABLE_H
#define BPFMAP_BENCH_TABLE_H

#include <stdio.h>

#define GRID_MAX_ROWS 24
#define GRID_MAX_COLS 24

enum grid_fmt {
	GRID_VALUE,   /* 89.45 */
	GRID_PERCENT, /* +156.15% */
	GRID_RATIO,   /* 3.94x */
};

struct grid {
	char title[96];
	char col_title[48];
	int nrows, ncols;
	char row[GRID_MAX_ROWS][24];
	char col[GRID_MAX_COLS][16];
	double v[GRID_MAX_ROWS][GRID_MAX_COLS]; /* NaN: no figure */
};

void grid_init(struct grid *g, const char *title, const char *col_title);
/* Index of the row/column labelled @label, added if new; -1 when full. */
int grid_row(struct grid *g, const char *label);
int grid_col(struct grid *g, const char *label);
void grid_set(struct grid *g, const char *row, const char *col, double v);
double grid_get(const struct grid *g, const char *row, const char *col);
void grid_print(FILE *f, const struct grid *g, enum grid_fmt fmt);

#endif
