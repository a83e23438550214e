/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Replay driver: feeds files (or every file in directories) to the fuzz
 * harness, one LLVMFuzzerTestOneInput() call each, so the committed corpus is
 * a regression test in every build (gcc, sanitizers, Valgrind) without
 * libFuzzer.  Usage: fuzz_replay PATH...; exits 1 if a path cannot be read
 * or holds no input at all (a disagreement with the model traps).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_map_ops.h"

static int replay_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	if (!fp) {
		perror(path);
		return -1;
	}
	if (fseek(fp, 0, SEEK_END) || (len = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET))
		goto fail;
	buf = malloc(len ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, fp) != (size_t)len)
		goto fail;
	fclose(fp);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 1;
fail:
	perror(path);
	free(buf);
	fclose(fp);
	return -1;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file in @dir, in name order; returns how many, or -1. */
static int replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int done = 0;

	if (!d) {
		perror(dir);
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				abort();
		}
		names[n] = malloc(strlen(dir) + strlen(de->d_name) + 2);
		if (!names[n])
			abort();
		sprintf(names[n], "%s/%s", dir, de->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (done >= 0 && !stat(names[i], &st) && S_ISREG(st.st_mode)) {
			if (replay_file(names[i]) < 0)
				done = -1;
			else
				done++;
		}
		free(names[i]);
	}
	free(names);
	return done;
}

int main(int argc, char **argv)
{
	int total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int n;

		if (stat(argv[i], &st)) {
			perror(argv[i]);
			return 1;
		}
		n = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]);
		if (n < 0)
			return 1;
		total += n;
	}
	fuzz_map_ops_flush();
	if (!total) {
		fprintf(stderr, "fuzz_replay: no inputs found\n");
		return 1;
	}
	printf("fuzz_replay: %d inputs replayed, every result as the model predicted\n", total);
	return 0;
}
