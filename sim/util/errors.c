/* Error code text and names, generated from the one table in
 * include/ctasim/errors.h. */
#include "ctasim/errors.h"

const char *cta_strerror(int code)
{
	switch (code) {
	case 0:
		return "success";
#define CTA__ERR_TEXT(name, value, text)                                                           \
	case value:                                                                                \
		return text;
		CTA_ERRNO_MAP(CTA__ERR_TEXT)
#undef CTA__ERR_TEXT
	}
	return "unknown error";
}

const char *cta_err_name(int code)
{
	switch (code) {
	case 0:
		return "CTA_OK";
#define CTA__ERR_NAME(name, value, text)                                                           \
	case value:                                                                                \
		return "CTA_E" #name;
		CTA_ERRNO_MAP(CTA__ERR_NAME)
#undef CTA__ERR_NAME
	}
	return "CTA_E?";
}
