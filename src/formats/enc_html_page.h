/* SPDX-License-Identifier: BSD-2-Clause */
/* The flame graph page of enc_html.c, in three parts; for enc_html.c alone. */
#ifndef HOSTPROF_ENC_HTML_PAGE_H
#define HOSTPROF_ENC_HTML_PAGE_H

/*
 * The page is head, the profiles' JSON, model, view, written one after the other: the head ends
 * by opening the data block, the model closes it and opens the script, the view ends the page.
 */
extern const char enc_html_page_head[];	 /* enc_html_page.c: HTML and CSS */
extern const char enc_html_page_model[]; /* enc_html_model.c: data into trees */
extern const char enc_html_page_view[];	 /* enc_html_view.c: panels, list, filters, URL */

#endif /* HOSTPROF_ENC_HTML_PAGE_H */
