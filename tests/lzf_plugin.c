/* lzf_plugin.c — an HDF5 filter plugin for id 32000 (LZF) that only says it was used: every
 * chunk fails with "the test plugin for filter 32000 ran". tests/e2e_lzf.py points
 * HDF5_PLUGIN_PATH at its folder to check that gpuprim keeps an LZF filter that HDF5 finds as
 * a plugin instead of registering its own. */
#include <hdf5.h>
#include <H5PLextern.h>

/* The filter: pushes the line that names this plugin and fails. */
static size_t test_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[],
                          size_t nbytes, size_t *buf_size, void **buf)
{
    (void)flags, (void)cd_nelmts, (void)cd_values, (void)nbytes, (void)buf_size, (void)buf;
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CALLBACK,
             "the test plugin for filter 32000 ran");
    return 0;
}

static const H5Z_class2_t test_class = {
    H5Z_CLASS_T_VERS, (H5Z_filter_t)32000, 1, 1, "lzf test plugin", NULL, NULL, test_filter,
};

H5PL_type_t H5PLget_plugin_type(void)
{
    return H5PL_TYPE_FILTER;
}

const void *H5PLget_plugin_info(void)
{
    return &test_class;
}
