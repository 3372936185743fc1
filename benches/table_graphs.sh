# The graphs of the issues' benchmark tables, shared by the scripts that source this
# file: `table_graph NAME BIN DATA WORK` prints the path of NAME's .egr file in WORK,
# making it once with the gpumst command BIN: NY and BAY converted from DATA/NAME.gr.xz;
# grid 2048x2048, uniform random 2^22 vertices / 2^25 edges, and R-MAT scale 22 (edge
# factor 16), generated with seed 1 and the default integer weights.
table_graph() {
    local name=$1 bin=$2 data=$3 work=$4
    local egr="$work/$name.egr"
    if [ ! -s "$egr" ]; then
        case "$name" in
        NY | BAY) "$bin" convert "$data/$name.gr.xz" "$egr" >&2 ;;
        grid) "$bin" generate grid --rows 2048 --cols 2048 --seed 1 --out "$egr" >&2 ;;
        random) "$bin" generate random --vertices 4194304 --edges 33554432 --seed 1 --out "$egr" >&2 ;;
        rmat) "$bin" generate rmat --scale 22 --edge-factor 16 --seed 1 --out "$egr" >&2 ;;
        *) echo "unknown graph $name (expected NY, BAY, grid, random or rmat)" >&2; return 2 ;;
        esac
    fi
    echo "$egr"
}
