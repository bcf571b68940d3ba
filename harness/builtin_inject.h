/* harness/builtin_inject.h — the injection a build carries when no --inject is given. Empty in
 * every real build; the bisect test commits a non-empty value here to make one throwaway commit
 * "break determinism", exactly as a code change in the simulation would. */
#ifndef DETGATE_HARNESS_BUILTIN_INJECT_H
#define DETGATE_HARNESS_BUILTIN_INJECT_H
#define DG_HARNESS_BUILTIN_INJECT ""
#endif
