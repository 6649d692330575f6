/* daolease — symbol visibility. The library builds with hidden visibility;
 * only symbols marked DLS_EXPORT are part of the ABI. */
#ifndef DAOLEASE_EXPORT_H
#define DAOLEASE_EXPORT_H
#if defined(DLS_BUILDING) && defined(__GNUC__)
#define DLS_EXPORT __attribute__((visibility("default")))
#else
#define DLS_EXPORT
#endif
#endif
