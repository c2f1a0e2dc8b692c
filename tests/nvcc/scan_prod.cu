// The cumulative products: scan.cu with XP_SCAN_OP a product (the generator's prod scans).
#define XP_SCAN_PROD 1
#include "scan.cu"
