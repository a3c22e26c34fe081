/* Wall-clock seconds for the budgeted loop's check that its threads gain
   time (OpenMP's clock; without OpenMP, where the threads run in turn in
   one, always 0). */
#ifndef SKPERC_WALL_H
#define SKPERC_WALL_H

#ifdef _OPENMP
#include <omp.h>
static double skperc_wall(void) { return omp_get_wtime(); }
#else
static double skperc_wall(void) { return 0.0; }
#endif

#endif
