package gpumst_test

import (
	"errors"
	"fmt"
	"log"

	"gpumst.dev/gpumst"
)

func ExampleMinimumSpanningForest() {
	ctx, err := gpumst.NewContext(gpumst.Options{}) // CUDA, an OpenCL GPU, else all CPU cores
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()

	// Edge i joins u[i] and v[i] with weight w[i]; vertex 4 is isolated.
	u := []uint32{0, 1, 2, 0, 1}
	v := []uint32{1, 2, 3, 3, 3}
	w := []float32{4, 1, 3, 2, 1}
	forest, err := gpumst.MinimumSpanningForest(ctx, 5, u, v, w)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("edges:", forest.Edges)
	fmt.Println("total:", forest.Total)
	fmt.Println("components:", forest.NumComponents)
	// Output:
	// edges: [1 3 4]
	// total: 4
	// components: 2
}

func ExampleScan() {
	ctx, err := gpumst.NewContext(gpumst.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()

	in := []int64{3, 1, 4, 1, 5}
	out := make([]int64, len(in))
	if err := gpumst.Scan(ctx, gpumst.Sum, gpumst.Exclusive, in, out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output: [0 3 4 8 9]
}

func ExampleSegmentedArgMin() {
	ctx, err := gpumst.NewContext(gpumst.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()

	// Three segments: [5 2 2], [] and [7 1].
	values, indices, err := gpumst.SegmentedArgMin(ctx, []uint32{5, 2, 2, 7, 1}, []uint64{0, 3, 3, 5})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(values, indices)
	// Output: [2 4294967295 1] [1 -1 4]
}

func ExampleError() {
	ctx, err := gpumst.NewContext(gpumst.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()

	_, err = gpumst.MinimumSpanningForest(ctx, 3, []uint32{0, 1}, []uint32{1, 5}, []int32{1, 1})
	fmt.Println(errors.Is(err, gpumst.ErrInvalidGraph))
	fmt.Println(err)
	// Output:
	// true
	// gpumst: minimum spanning forest: invalid graph: edge 1: v = 5 is out of range for 3 vertices
}
