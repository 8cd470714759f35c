/* SPDX-License-Identifier: BSD-2-Clause */
/* The flame graph page of enc_html.c (enc_html_page.c); for enc_html.c alone. */
#ifndef HOSTPROF_ENC_HTML_PAGE_H
#define HOSTPROF_ENC_HTML_PAGE_H

/* The whole page; enc_html__write() puts the profiles' JSON in place of its DATA marker. */
extern const char enc_html_page[];

#endif /* HOSTPROF_ENC_HTML_PAGE_H */
