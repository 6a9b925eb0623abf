#ifndef EGGS_CNCURSES_SHIM_H
#define EGGS_CNCURSES_SHIM_H
// SwiftPM drops the -D_XOPEN_SOURCE=600 that pkg-config gives, so ask for the
// wide-character API here, before ncurses is included.
#define _XOPEN_SOURCE_EXTENDED 1
#define NCURSES_WIDECHAR 1
#include <locale.h>
#include <ncursesw/ncurses.h>

// Swift 6 rejects ncurses' mutable C globals as not concurrency-safe, and the
// A_* attribute macros are not imported: small accessors stand in for them.
static inline WINDOW *eggs_stdscr(void) { return stdscr; }
static inline int eggs_lines(void) { return LINES; }
static inline int eggs_cols(void) { return COLS; }
static inline int eggs_colors(void) { return COLORS; }
static inline attr_t eggs_a_bold(void) { return A_BOLD; }
static inline attr_t eggs_a_reverse(void) { return A_REVERSE; }
static inline attr_t eggs_a_underline(void) { return A_UNDERLINE; }
static inline attr_t eggs_a_dim(void) { return A_DIM; }
static inline attr_t eggs_a_normal(void) { return A_NORMAL; }
static inline attr_t eggs_color_pair(int n) { return COLOR_PAIR(n); }
static inline int eggs_key_resize(void) { return KEY_RESIZE; }
static inline int eggs_err(void) { return ERR; }
#endif
