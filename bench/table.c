// SPDX-License-Identifier: BSD-2-Clause
/* The seeds' table layout (see table.h). */
#include <math.h>
#include <string.h>

#include "table.h"

#define ROW_LABEL_WIDTH 10
#define CELL_WIDTH 9

void grid_init(struct grid *g, const char *title, const char *col_title)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->title, sizeof(g->title), "%s", title);
	snprintf(g->col_title, sizeof(g->col_title), "%s", col_title ? col_title : "");
	for (int r = 0; r < GRID_MAX_ROWS; r++)
		for (int c = 0; c < GRID_MAX_COLS; c++)
			g->v[r][c] = NAN;
}

static int find_or_add(char *labels, size_t width, int *n, int max, const char *label)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(labels + (size_t)i * width, label))
			return i;
	if (*n == max)
		return -1;
	snprintf(labels + (size_t)*n * width, width, "%s", label);
	return (*n)++;
}

int grid_row(struct grid *g, const char *label)
{
	return find_or_add(&g->row[0][0], sizeof(g->row[0]), &g->nrows, GRID_MAX_ROWS, label);
}

int grid_col(struct grid *g, const char *label)
{
	return find_or_add(&g->col[0][0], sizeof(g->col[0]), &g->ncols, GRID_MAX_COLS, label);
}

void grid_set(struct grid *g, const char *row, const char *col, double v)
{
	int r = grid_row(g, row), c = grid_col(g, col);

	if (r >= 0 && c >= 0)
		g->v[r][c] = v;
}

double grid_get(const struct grid *g, const char *row, const char *col)
{
	for (int r = 0; r < g->nrows; r++) {
		if (strcmp(g->row[r], row))
			continue;
		for (int c = 0; c < g->ncols; c++)
			if (!strcmp(g->col[c], col))
				return g->v[r][c];
	}
	return NAN;
}

static void format_cell(char *buf, size_t len, double v, enum grid_fmt fmt)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (fmt == GRID_PERCENT)
		snprintf(buf, len, "%+.2f%%", v);
	else if (fmt == GRID_RATIO)
		snprintf(buf, len, "%.2fx", v);
	else if (v >= 10000)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.2f", v);
}

void grid_print(FILE *f, const struct grid *g, enum grid_fmt fmt)
{
	int lw = ROW_LABEL_WIDTH;

	for (int r = 0; r < g->nrows; r++)
		if ((int)strlen(g->row[r]) > lw)
			lw = (int)strlen(g->row[r]);
	fprintf(f, "  %s\n", g->title);
	if (g->col_title[0]) {
		/* Centred over the columns, as the seeds do. */
		int cols = g->ncols * CELL_WIDTH, tl = (int)strlen(g->col_title);
		int pad = lw + 4 + (cols - tl) / 2;

		if (pad < lw + 4)
			pad = lw + 4;
		fprintf(f, "%*s%s\n", pad, "", g->col_title);
	}
	fprintf(f, "%*s", lw + 4, "");
	for (int c = 0; c < g->ncols; c++)
		fprintf(f, "%*s", CELL_WIDTH, g->col[c]);
	fputc('\n', f);
	for (int r = 0; r < g->nrows; r++) {
		fprintf(f, "    %-*s", lw, g->row[r]);
		for (int c = 0; c < g->ncols; c++) {
			char buf[32];

			format_cell(buf, sizeof(buf), g->v[r][c], fmt);
			fprintf(f, " %*s", CELL_WIDTH - 1, buf);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
}
