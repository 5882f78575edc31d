#include "error.h"

int ce_err_public(int err)
{
    return err == CE_ERR_RETRY ? CE_ERR_DOWNLOAD : err;
}

int ce_exit_code(int err)
{
    switch (ce_err_public(err)) {
    case CE_OK: return 0;
    case CE_ERR_USAGE: return 2;
    case CE_ERR_NOTFOUND: return 3;
    case CE_ERR_DOWNLOAD: return 4;
    case CE_ERR_INTEGRITY: return 5;
    case CE_ERR_PERM: return 6;
    case CE_ERR_CHECK: return 7;
    case CE_ERR_NOGPU: return 8;
    default: return 1;
    }
}

const char *ce_err_name(int err)
{
    switch (ce_err_public(err)) {
    case CE_OK: return "ok";
    case CE_ERR_USAGE: return "usage";
    case CE_ERR_NOTFOUND: return "not found";
    case CE_ERR_DOWNLOAD: return "download failed";
    case CE_ERR_INTEGRITY: return "integrity";
    case CE_ERR_PERM: return "permission";
    case CE_ERR_CHECK: return "check failed";
    case CE_ERR_NOGPU: return "no usable GPU";
    case CE_ERR_NOMEM: return "out of memory";
    case CE_ERR_IO: return "i/o";
    case CE_ERR_SPACE: return "no space";
    case CE_ERR_LOCKED: return "locked";
    default: return "error";
    }
}
