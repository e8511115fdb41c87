package sim

import (
	"math"
	"sync"
)

// Routing statistics under uniform routing.
//
// Model: each of T tokens picks a uniformly random set of k distinct experts
// out of E (top-k of a router whose scores are exchangeable across experts:
// "uniform routing"). Experts are placed in EP equal slots of m = E/EP
// consecutive experts (vLLM's linear expert placement); every rank of a slot
// computes all the token-expert pairs routed to the slot's experts.
//
// Exact results (derived here, checked against a seeded Monte-Carlo in
// routing_test.go):
//
//   - An expert is chosen by one token with probability k/E, independently
//     across tokens, so P(expert untouched by T tokens) = (1-k/E)^T and the
//     expected number of distinct experts a slot touches is
//     m·(1-(1-k/E)^T).
//   - Two given experts are both avoided by one token with probability
//     q2 = (E-k)(E-k-1)/(E(E-1)); hence the variance of the untouched count U
//     of a slot is m(m-1)·q2^T + m·q1^T - (m·q1^T)^2 with q1 = 1-k/E.
//   - A slot's pair count is a sum of T independent hypergeometric(E, m, k)
//     draws: mean T·k·m/E, variance T·k·(m/E)(1-m/E)(E-k)/(E-1).
//   - One token reaches a slot (has at least one of its k experts there) with
//     probability hit = 1 - C(E-m, k)/C(E, k); the tokens a slot receives are
//     binomial(T, hit).
//
// Approximation (the only one): the expected maximum over the EP slots of a
// per-slot count X with mean mu and deviation sigma is taken as
//
//	mu + sigma · sqrt(EP/(EP-1)) · e(EP)
//
// where e(n) is the expected maximum of n independent standard normals
// (computed by quadrature) and sqrt(EP/(EP-1)) corrects for the slot counts
// summing to a constant (EP exchangeable normals with correlation -1/(EP-1)
// are sqrt(EP/(EP-1))·(Z_i - mean(Z))). The result is clamped to the count's
// range (pairs at least ceil(T·k/EP)). At T = 1 the busiest slot's count is
// computed exactly instead (oneTokenMax). Against a seeded Monte-Carlo the
// approximation is within 5% for T >= 2 on the shapes of the shipped models
// (Kimi-K2.5 and DeepSeek-V3 EP8, Qwen3 EP4, Mixtral EP8; it runs low by
// 3-5% at T = 2..8, where the counts are small integers); see
// TestRoutingMonteCarlo for the grid and the tolerance.
type routing struct {
	experts int // E
	topK    int // k
	ep      int // EP slots
	m       int // experts per slot, E/EP

	q1, q2      float64 // per-token avoid probabilities of one and of two given experts
	hitSlot     float64 // P(a token has at least one expert in a given slot)
	pairVar1    float64 // variance of one token's pair count in one slot
	maxFactor   float64 // sqrt(EP/(EP-1)) · e(EP); 0 when EP == 1
	logQ1       float64 // ln q1
	logQ2       float64 // ln q2
	distinctCap float64 // m
	oneMax      float64 // exact E[max over slots of one token's pair count]
}

// load is the MoE work on the most-loaded EP slot for a number of tokens.
type load struct {
	Tokens   float64 // distinct tokens that reach the slot (expected)
	Pairs    float64 // token-expert pairs of the most-loaded slot
	Touched  float64 // distinct experts read by the most-loaded slot
	MeanPair float64 // token-expert pairs of an average slot (T·k/EP)
}

func newRouting(experts, topK, ep int) routing {
	r := routing{experts: experts, topK: topK, ep: ep}
	if experts <= 0 || topK <= 0 || ep <= 0 {
		return r
	}
	E, k := float64(experts), float64(topK)
	r.m = experts / ep
	m := float64(r.m)
	r.distinctCap = m
	r.q1 = 1 - k/E
	if experts > 1 {
		r.q2 = (E - k) * (E - k - 1) / (E * (E - 1))
	}
	r.logQ1 = math.Log(r.q1)
	r.logQ2 = math.Log(r.q2)
	// P(no expert of a token in the slot) = C(E-m, k)/C(E, k)
	//  = prod_{i<k} (E-m-i)/(E-i).
	miss := 1.0
	for i := 0; i < topK; i++ {
		miss *= math.Max(0, E-m-float64(i)) / (E - float64(i))
	}
	r.hitSlot = 1 - miss
	if experts > 1 {
		r.pairVar1 = k * (m / E) * (1 - m/E) * (E - k) / (E - 1)
	}
	if ep > 1 {
		r.maxFactor = math.Sqrt(float64(ep)/float64(ep-1)) * expectedMaxNormal(ep)
		r.oneMax = oneTokenMax(r.m, ep, topK)
	}
	return r
}

// oneTokenMax is the exact expected largest slot count of one token's k
// experts over EP slots of m experts: with
// P(max <= x) = [z^k] (sum_{c<=x} C(m,c) z^c)^EP / C(E,k),
// E[max] = sum_{x=0}^{k-1} (1 - P(max <= x)).
func oneTokenMax(m, ep, k int) float64 {
	count := func(x int) float64 { // [z^k] (sum_{c<=x} C(m,c) z^c)^EP
		base := make([]float64, k+1)
		c := 1.0 // C(m, i)
		for i := 0; i <= k && i <= x && i <= m; i++ {
			base[i] = c
			c = c * float64(m-i) / float64(i+1)
		}
		acc := make([]float64, k+1)
		acc[0] = 1
		next := make([]float64, k+1)
		for s := 0; s < ep; s++ {
			clear(next)
			for i, a := range acc {
				if a == 0 {
					continue
				}
				for j := 0; i+j <= k; j++ {
					next[i+j] += a * base[j]
				}
			}
			acc, next = next, acc
		}
		return acc[k]
	}
	total := count(k)
	e := 0.0
	for x := 0; x < k; x++ {
		e += 1 - count(x)/total
	}
	return e
}

// at returns the routing load for T tokens entering the MoE layer of the
// expert domain (all slots). It does not allocate.
func (r *routing) at(tokens float64) load {
	if tokens <= 0 || r.experts <= 0 {
		return load{}
	}
	k := float64(r.topK)
	m := r.distinctCap
	T := tokens
	var l load
	l.MeanPair = T * k / float64(r.ep)
	// Distinct experts touched in one slot: m - U.
	pU1 := math.Exp(T * r.logQ1) // q1^T
	meanU := m * pU1
	meanD := m - meanU
	if r.ep == 1 {
		l.Tokens = T
		l.Pairs = T * k
		l.Touched = meanD
		return l
	}
	varU := m*(m-1)*math.Exp(T*r.logQ2) + meanU - meanU*meanU
	if varU < 0 {
		varU = 0
	}
	l.Touched = clamp(meanD+math.Sqrt(varU)*r.maxFactor, meanD, math.Min(m, T*k))
	pairMax := T * math.Min(k, m)
	// Integer counts summing to T·k: the busiest slot holds at least
	// ceil(T·k/EP).
	pairMin := math.Ceil(l.MeanPair - 1e-9)
	l.Pairs = clamp(l.MeanPair+math.Sqrt(T*r.pairVar1)*r.maxFactor, pairMin, pairMax)
	if T == 1 {
		// One token: pairs and distinct experts coincide; exact.
		l.Pairs, l.Touched = r.oneMax, r.oneMax
	}
	// Tokens reaching the busiest slot: binomial(T, hit) per slot, maximum
	// by the same rule.
	meanT := T * r.hitSlot
	l.Tokens = clamp(meanT+math.Sqrt(meanT*(1-r.hitSlot))*r.maxFactor, meanT, T)
	if T == 1 {
		l.Tokens = 1 // some slot receives the token
	}
	return l
}

func clamp(x, lo, hi float64) float64 {
	if x < lo {
		x = lo
	}
	if x > hi {
		x = hi
	}
	return x
}

// maxNormals remembers expectedMaxNormal by n: the quadrature (24,000
// points) is most of New's time, and a plan builds hundreds of Sims over a
// handful of EP sizes. The value is a pure function of n.
var maxNormals sync.Map // int -> float64

// expectedMaxNormal is E[max of n independent standard normals] (see
// expectedMaxNormalQuad), remembered by n.
func expectedMaxNormal(n int) float64 {
	if v, ok := maxNormals.Load(n); ok {
		return v.(float64)
	}
	v := expectedMaxNormalQuad(n)
	maxNormals.Store(n, v)
	return v
}

// expectedMaxNormalQuad is E[max of n independent standard normals]:
// ∫ x · n·φ(x)·Φ(x)^(n-1) dx, by the trapezoidal rule on [-12, 12] with
// step 1e-3 (error far below 1e-6 for n <= 4096).
func expectedMaxNormalQuad(n int) float64 {
	if n <= 1 {
		return 0
	}
	const lo, hi, h = -12.0, 12.0, 1e-3
	steps := int((hi - lo) / h)
	nf := float64(n)
	sum := 0.0
	for i := 0; i <= steps; i++ {
		x := lo + float64(i)*h
		phi := math.Exp(-x*x/2) / math.Sqrt(2*math.Pi)
		Phi := 0.5 * math.Erfc(-x/math.Sqrt2)
		f := x * nf * phi * math.Pow(Phi, nf-1)
		if i == 0 || i == steps {
			f /= 2
		}
		sum += f
	}
	return sum * h
}

// meanTouched is the expected distinct experts of one slot: m·(1-(1-k/E)^T).
func (r *routing) meanTouched(tokens float64) float64 {
	return r.distinctCap * (1 - math.Exp(tokens*r.logQ1))
}
