# One call: the build and the gpu suite (suite.sh), then the NumPy suite on the GPU beside memcheck
# over the GPU test programs (numpy_and_san.sh) until LIMIT_S seconds after the start.
start=$SECONDS
bash bench/results/2026-12-06-h100-reliability/scripts/suite.sh
DEADLINE_S=$(( ${LIMIT_S:-560} - (SECONDS - start) )) bash bench/results/2026-12-06-h100-reliability/scripts/numpy_and_san.sh
