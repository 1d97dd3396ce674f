/* test_lzf.c — gp_h5_register_filters and the encode direction of gpuprim's LZF filter
 * (io/h5_lzf.c), through HDF5 itself (one process, no MPI).
 *
 * usage: test_lzf FILE
 * Registers the filters twice (the same result both times). With liblzf built in it writes
 * FILE through HDF5 with filter 32000 set as h5py sets it (optional), in chunks:
 *   /ramp_f64      50021 float64, i * 0.5 - 1000 (chunks of 4099: every chunk compresses);
 *   /noise_u32     30011 uint32 of xorshift32 from 2463534242 (chunks of 1000: LZF does not
 *                  shrink them, HDF5 stores them as they are, their filter-mask bit set);
 *   /shuffled_i64  20011 int64, (i * i) % 1000003 - 500000, shuffle then LZF (chunks of 999);
 *   /grid_f32      97 x 55 float32, (r * 55 + c) * 0.25 (chunks of 16 x 16, partial edges);
 * checks the cd_values h5py writes (4, 0x0105, the chunk's bytes) and each chunk's filter
 * mask, and reads everything back through HDF5. tests/e2e_lzf.py then reads FILE with h5py
 * (its own LZF filter) against the same formulas. Built without liblzf, it checks that
 * registration returns -1 and that creating an LZF dataset fails with the line that says
 * how to get LZF. Run with HDF5_PLUGIN_PATH naming no LZF plugin. Exit 0 when every check
 * passes.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <hdf5.h>

#include "gpuprim/h5io.h"
#include "test_check.h"

#define LZF_ID 32000
#define NOISE_SEED 2463534242u

/* A creation property list: chunks of dims, optionally shuffle, then LZF (optional). */
static hid_t lzf_dcpl(int nd, const hsize_t *chunk, int shuffle)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0 || H5Pset_chunk(dcpl, nd, chunk) < 0) return -1;
    if (shuffle && H5Pset_shuffle(dcpl) < 0) return -1;
    if (H5Pset_filter(dcpl, LZF_ID, H5Z_FLAG_OPTIONAL, 0, NULL) < 0) return -1;
    return dcpl;
}

#ifdef GPUPRIM_HAVE_LZF

/* Writes dataset name (nd dims, chunks chunk, element type t) from buf, checks its
 * cd_values and chunk filter masks (want_raw: 0 every chunk compressed, 1 some stored as
 * they are), reads it back and compares the bytes. */
static void write_check(hid_t f, const char *name, hid_t t, int nd, const hsize_t *dims,
                        const hsize_t *chunk, int shuffle, const void *buf, size_t bytes,
                        int want_raw)
{
    CTX("%s", name);
    hid_t dcpl = lzf_dcpl(nd, chunk, shuffle);
    hid_t space = H5Screate_simple(nd, dims, NULL);
    hid_t d = H5Dcreate2(f, name, t, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (!CHECK(dcpl >= 0 && space >= 0 && d >= 0, "create")) return;
    CHECK(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "write");

    /* h5py's cd_values: revision 4, LZF API 0x0105, the chunk's bytes */
    hid_t cp = H5Dget_create_plist(d);
    unsigned flags = 0, cd[8] = {0};
    size_t ncd = 8;
    uint64_t cbytes = H5Tget_size(t);
    for (int i = 0; i < nd; i++) cbytes *= chunk[i];
    CHECK(H5Pget_filter_by_id2(cp, LZF_ID, &flags, &ncd, cd, 0, NULL, NULL) >= 0 && ncd == 3 &&
              cd[0] == 4 && cd[1] == 0x0105 && cd[2] == cbytes &&
              (flags & H5Z_FLAG_OPTIONAL),
          "cd_values %zu: %u %u %u (want 4 261 %llu), flags %u", ncd, cd[0], cd[1], cd[2],
          (unsigned long long)cbytes, flags);
    H5Pclose(cp);
    H5Dclose(d);

    /* after a flush: how each chunk is stored */
    d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t fs = H5Dget_space(d);
    hsize_t nchunks = 0;
    int raw = 0, packed = 0;
    if (CHECK(H5Dget_num_chunks(d, fs, &nchunks) >= 0 && nchunks > 0, "chunks")) {
        for (hsize_t k = 0; k < nchunks; k++) {
            unsigned mask = 0;
            hsize_t size = 0;
            haddr_t addr;
            CHECK(H5Dget_chunk_info(d, fs, k, NULL, &mask, &addr, &size) >= 0, "chunk %llu",
                  (unsigned long long)k);
            int lzf_bit = shuffle ? 2 : 1; /* the filter's place in the pipeline */
            if (mask & lzf_bit) raw++;
            else packed++;
        }
    }
    CHECK(want_raw ? raw > 0 : raw == 0, "%d chunks stored as they are, %d compressed", raw,
          packed);
    char *back = xmalloc(bytes);
    CHECK(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0 &&
              memcmp(back, buf, bytes) == 0,
          "read back through HDF5");
    free(back);
    H5Sclose(fs);
    H5Dclose(d);
    H5Sclose(space);
    H5Pclose(dcpl);
    CTX("%s", "");
}

static void write_file(const char *path)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (!CHECK(f >= 0, "create %s", path)) return;

    enum { NR = 50021, NN = 30011, NS = 20011, ROWS = 97, COLS = 55 };
    double *ramp = xmalloc(NR * sizeof *ramp);
    for (int i = 0; i < NR; i++) ramp[i] = i * 0.5 - 1000.0;
    hsize_t dims = NR, chunk = 4099;
    write_check(f, "/ramp_f64", H5T_NATIVE_DOUBLE, 1, &dims, &chunk, 0, ramp, NR * 8, 0);
    free(ramp);

    uint32_t *noise = xmalloc(NN * sizeof *noise), x = NOISE_SEED;
    for (int i = 0; i < NN; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        noise[i] = x;
    }
    dims = NN;
    chunk = 1000;
    write_check(f, "/noise_u32", H5T_NATIVE_UINT32, 1, &dims, &chunk, 0, noise, NN * 4, 1);
    free(noise);

    int64_t *sq = xmalloc(NS * sizeof *sq);
    for (int64_t i = 0; i < NS; i++) sq[i] = (i * i) % 1000003 - 500000;
    dims = NS;
    chunk = 999;
    write_check(f, "/shuffled_i64", H5T_NATIVE_INT64, 1, &dims, &chunk, 1, sq, NS * 8, 0);
    free(sq);

    float *grid = xmalloc(ROWS * COLS * sizeof *grid);
    for (int i = 0; i < ROWS * COLS; i++) grid[i] = (float)i * 0.25f;
    hsize_t gd[2] = {ROWS, COLS}, gc[2] = {16, 16};
    write_check(f, "/grid_f32", H5T_NATIVE_FLOAT, 2, gd, gc, 0, grid, ROWS * COLS * 4, 0);
    free(grid);
    CHECK(H5Fclose(f) >= 0, "close %s", path);
}

#else /* built without liblzf: the placeholder refuses, saying how to get LZF */

/* The innermost description on HDF5's error stack. */
static herr_t first_desc(unsigned n, const H5E_error2_t *err, void *data)
{
    char *out = data;
    if (n == 0 && err->desc) snprintf(out, 512, "%s", err->desc);
    return 0;
}

static void write_file(const char *path)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (!CHECK(f >= 0, "create %s", path)) return;
    hsize_t dims = 100, chunk = 10;
    hid_t dcpl = lzf_dcpl(1, &chunk, 0);
    hid_t space = H5Screate_simple(1, &dims, NULL);
    hid_t d = H5Dcreate2(f, "/data", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    char desc[512] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_desc, desc);
    CHECK(d < 0 && strstr(desc, "install liblzf-dev and rebuild, or set HDF5_PLUGIN_PATH"),
          "creating an LZF dataset fails saying how to get LZF: '%s'", desc);
    if (d >= 0) H5Dclose(d);
    H5Sclose(space);
    H5Pclose(dcpl);
    H5Fclose(f);
}

#endif

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_lzf FILE\n");
        return 2;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int first = gp_h5_register_filters();
#ifdef GPUPRIM_HAVE_LZF
    CHECK(first == 0, "gp_h5_register_filters: %d, want 0", first);
    unsigned info = 0;
    CHECK(H5Zget_filter_info(LZF_ID, &info) >= 0 &&
              (info & H5Z_FILTER_CONFIG_ENCODE_ENABLED) &&
              (info & H5Z_FILTER_CONFIG_DECODE_ENABLED),
          "filter 32000 encodes and decodes (info %u)", info);
#else
    CHECK(first == -1, "gp_h5_register_filters without liblzf: %d, want -1", first);
#endif
    CHECK(H5Zfilter_avail(LZF_ID) > 0, "filter 32000 is registered");
    CHECK(gp_h5_register_filters() == first, "a second call gives the first call's result");
    write_file(argv[1]);
    return gp_check_done("test_lzf");
}
