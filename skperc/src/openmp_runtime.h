/* What the compiled loops ask of the OpenMP runtime: its wall clock, for
   the budgeted loop's check that its threads gain time, and the threads
   it gives a parallel region by default. Without OpenMP, where the
   threads run in turn in one, the clock is always 0 and there is no
   limit (0). */
#ifndef SKPERC_OPENMP_RUNTIME_H
#define SKPERC_OPENMP_RUNTIME_H

#ifdef _OPENMP
#include <omp.h>
static double skperc_wall(void) { return omp_get_wtime(); }
/* OMP_NUM_THREADS, a limit that threadpoolctl set, or the processors */
static int skperc_thread_limit(void) { return omp_get_max_threads(); }
#else
static double skperc_wall(void) { return 0.0; }
static int skperc_thread_limit(void) { return 0; }
#endif

#endif
