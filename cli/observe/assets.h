/* daolease command — the page's files, compiled in (embed.py). */
#ifndef DLS_CLI_OBSERVE_ASSETS_H
#define DLS_CLI_OBSERVE_ASSETS_H

#include <stddef.h>

extern const unsigned char obs_asset_page[];   /* page.html */
extern const size_t obs_asset_page_len;
extern const unsigned char obs_asset_script[]; /* app.js */
extern const size_t obs_asset_script_len;
extern const unsigned char obs_asset_style[];  /* app.css */
extern const size_t obs_asset_style_len;

#endif
