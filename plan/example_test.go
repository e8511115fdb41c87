package plan_test

import (
	"fmt"

	"github.com/moecast/moecast/plan"
)

// Four deployments as (tokens/s per GPU, tokens/s per user): c is
// dominated by b (slower on both axes), the others each win on one axis.
func ExampleFront() {
	names := []string{"a", "b", "c", "d"}
	perGPU := []float64{900, 600, 500, 200}
	perUser := []float64{10, 30, 25, 60}
	front, by := plan.Front(perGPU, perUser, []int{0, 1, 2, 3})
	for _, i := range front {
		fmt.Printf("front: %s\n", names[i])
	}
	fmt.Printf("%s dominated by %s\n", names[2], names[by[2]])
	// Output:
	// front: a
	// front: b
	// front: d
	// c dominated by b
}
