/* The exact engine of log(e^{X_0} ... e^{X_{r-1}}) in the Lyndon basis, one degree at a time, in C: Goldberg's
 * coefficients on the Lyndon words (goldberg_rhs), the grouping by multidegree (level_blocks), the solve of each
 * block (solve_block, below; solve_level runs a share of a degree's blocks), the reduced nonzero terms
 * (level_terms) and the relabelling search of the even BCH degrees (prefixed_positions); and Duval's generation
 * of the Lyndon words.  The solve of one multidegree block:
 *
 * Given the Lyndon words u_0 < u_1 < ... < u_{m-1} of one multidegree (length n) and the coefficients z_t of
 * a homogeneous Lie polynomial on them (integers over a common denominator), find the integers c_t with
 *
 *     z_t = sum_{j <= t} (P_{u_j}, u_t) c_j,        (P_{u_t}, u_t) = 1,
 *
 * by forward substitution.  P_w is the Lyndon basis element (standard bracketing) and (P, s) the coefficient
 * of the word s in P; (P_w, u) = 0 unless u >= w (Reutenauer, Free Lie Algebras, Thm 5.1), so the system is
 * unitriangular and integral: no denominators appear.
 *
 * The entries come from the bracket recursion on standard factorisations w = xy (|x| = p, |y| = q):
 *
 *     (P_w, s) = (P_x, s[0:p]) (P_y, s[p:n]) - (P_y, s[0:q]) (P_x, s[q:n]),
 *
 * run as a straight-line programme over nodes (Lyndon word v, offset o) meaning (P_v, u[o:o+|v|]) for the
 * current target u.  Two facts keep it small (the ideas follow H. Hofstaetter's program `bch`,
 * github.com/HaraldHofstaetter/BCH, and its manual arXiv:2102.06570; this code is ours):
 *   - every word of the block starts with its smallest letter a, and w = a^k y with standard factorisation
 *     (a, a^{k-1} y) at each step reads (P_w, u) = (P_y, u[k:]) when u starts with a^k, and 0 otherwise; so
 *     column j is its "core" y_j read at offset k_j;
 *   - nodes are created depth first in column order, so the nodes column j needs are a prefix of the
 *     programme, and target t (which needs the columns j <= t only) runs only that prefix.
 * Eight targets run at once in vector lanes.  Node values are int32: a bracket monomial of degree l has at
 * most 2^(l-1) words, each with coefficient +-1, so |(P_v, s)| <= 2^(l-1) < 2^31 for l <= 31.  The solution
 * is accumulated in 128-bit integers with overflow checks; an overflow is reported, never wrapped.
 *
 * A word is held as an integer code with `bits` bits per letter, letter l stored as l + 1, first letter most
 * significant: two words compare lexicographically (a proper prefix first) as their codes shifted to the
 * same left edge.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LANES 8
typedef int32_t lanes_t __attribute__((vector_size(4 * LANES)));
typedef __int128 i128;
typedef unsigned __int128 u128;

/* hi * 2^64 + lo, composed in unsigned arithmetic (a left shift of a negative signed value is undefined) */
static inline i128 join128(int64_t hi, uint64_t lo) { return (i128)(((u128)(uint64_t)hi << 64) | (u128)lo); }

enum { OK = 0, NO_MEMORY = 1, OVERFLOW = 2, BAD_INPUT = 3 };

/* ---- words as codes ---------------------------------------------------------------------------------- */

typedef struct {
    int bits;      /* bits per letter */
    uint64_t mask; /* one letter */
} alphabet_t;

static inline uint64_t subword(const alphabet_t *al, uint64_t code, int len, int start, int sublen) {
    /* letters start .. start+sublen-1 of a word of length len */
    int shift = (len - start - sublen) * al->bits;
    uint64_t m = sublen * al->bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << (sublen * al->bits)) - 1);
    return (code >> shift) & m;
}

static inline int compare_words(const alphabet_t *al, uint64_t a, int la, uint64_t b, int lb) {
    /* lexicographic order, a proper prefix first; letters are >= 1, so padding with 0 is smaller */
    int l = la > lb ? la : lb;
    uint64_t pa = a << ((l - la) * al->bits), pb = b << ((l - lb) * al->bits);
    if (pa != pb) return pa < pb ? -1 : 1;
    return la == lb ? 0 : (la < lb ? -1 : 1);
}

static int right_factor_length(const alphabet_t *al, uint64_t code, int len) {
    /* The standard factorisation of a Lyndon word w = xy: y is its lexicographically smallest proper suffix. */
    int best = 1;
    uint64_t best_code = subword(al, code, len, len - 1, 1);
    for (int q = 2; q < len; q++) {
        uint64_t s = subword(al, code, len, len - q, q);
        if (compare_words(al, s, q, best_code, best) < 0) {
            best = q;
            best_code = s;
        }
    }
    return best;
}

/* ---- the programme: nodes (word, offset) with a hash table ---------------------------------------------- */

typedef struct {
    int32_t a, b, c, d; /* value = X[a] X[b] - X[c] X[d] */
} node_t;

typedef struct {
    uint64_t code;   /* word code; 0 = empty slot */
    uint32_t lenoff; /* length << 8 | offset */
    int32_t index;
} slot_t;

typedef struct {
    const alphabet_t *al;
    int n, n_letters;
    node_t *nodes;
    int32_t count, capacity;
    slot_t *table;
    uint64_t table_size; /* power of two */
    uint64_t used;
    int status;
} programme_t;

static inline uint64_t hash_key(uint64_t code, uint32_t lenoff) {
    uint64_t h = code * 0x9E3779B97F4A7C15ull ^ ((uint64_t)lenoff * 0xC2B2AE3D27D4EB4Full);
    return h ^ (h >> 29);
}

static int table_grow(programme_t *P) {
    uint64_t size = P->table_size ? 2 * P->table_size : 1 << 10;
    slot_t *fresh = calloc(size, sizeof(slot_t));
    if (!fresh) return NO_MEMORY;
    for (uint64_t i = 0; i < P->table_size; i++) {
        slot_t *s = &P->table[i];
        if (!s->code) continue;
        uint64_t h = hash_key(s->code, s->lenoff) & (size - 1);
        while (fresh[h].code) h = (h + 1) & (size - 1);
        fresh[h] = *s;
    }
    free(P->table);
    P->table = fresh;
    P->table_size = size;
    return OK;
}

static int32_t new_node(programme_t *P, node_t node) {
    if (P->count == P->capacity) {
        int32_t capacity = P->capacity ? 2 * P->capacity : 1 << 10;
        node_t *grown = realloc(P->nodes, (size_t)capacity * sizeof(node_t));
        if (!grown) {
            P->status = NO_MEMORY;
            return -1;
        }
        P->nodes = grown;
        P->capacity = capacity;
    }
    P->nodes[P->count] = node;
    return P->count++;
}

/* The node of (P_v, u[offset : offset + len]) for the Lyndon word v (code, len), created with its children. */
static int32_t node_of(programme_t *P, uint64_t code, int len, int offset) {
    if (P->status) return -1;
    if (len == 1) return (int32_t)((code - 1) * P->n + offset); /* leaves: letter * n + offset */
    uint32_t lenoff = (uint32_t)len << 8 | (uint32_t)offset;
    if (2 * (P->used + 1) > P->table_size && (P->status = table_grow(P))) return -1;
    uint64_t h = hash_key(code, lenoff) & (P->table_size - 1);
    while (P->table[h].code) {
        if (P->table[h].code == code && P->table[h].lenoff == lenoff) return P->table[h].index;
        h = (h + 1) & (P->table_size - 1);
    }
    int q = right_factor_length(P->al, code, len), p = len - q;
    uint64_t x = subword(P->al, code, len, 0, p), y = subword(P->al, code, len, p, q);
    node_t node;
    node.a = node_of(P, x, p, offset);
    node.b = node_of(P, y, q, offset + p);
    node.c = node_of(P, y, q, offset);
    node.d = node_of(P, x, p, offset + q);
    if (P->status) return -1;
    int32_t index = new_node(P, node);
    if (index < 0) return -1;
    /* the recursion may have grown the table: find the slot again */
    h = hash_key(code, lenoff) & (P->table_size - 1);
    while (P->table[h].code) h = (h + 1) & (P->table_size - 1);
    P->table[h].code = code;
    P->table[h].lenoff = lenoff;
    P->table[h].index = index;
    P->used++;
    return index;
}

/* ---- evaluation ------------------------------------------------------------------------------------------ */

__attribute__((target_clones("avx2", "default")))
static void run_programme(lanes_t *X, const node_t *nodes, int32_t first, int32_t stop) {
    for (int32_t i = first; i < stop; i++) {
        const node_t *s = &nodes[i];
        X[i] = X[s->a] * X[s->b] - X[s->c] * X[s->d];
    }
}

/* ---- the block solve --------------------------------------------------------------------------------------- */

static int solve_block(int n, int n_letters, int m, const uint8_t *words, const int64_t *rhs_hi,
                       const uint64_t *rhs_lo, int64_t *out_hi, uint64_t *out_lo, int64_t *n_nodes) {
    alphabet_t al;
    al.bits = 1;
    while ((1 << al.bits) < n_letters + 1) al.bits++;
    al.mask = ((uint64_t)1 << al.bits) - 1;
    if (n < 1 || n > 31 || n * al.bits > 64 || m < 1) return BAD_INPUT;

    programme_t P = {0};
    P.al = &al;
    P.n = n;
    P.n_letters = n_letters;
    int status = OK;
    int32_t leaves = n_letters * n;
    int32_t *root = malloc((size_t)m * sizeof(int32_t));
    int32_t *needed = malloc((size_t)m * sizeof(int32_t)); /* programme length column j needs */
    int8_t *strip = malloc((size_t)m);
    int8_t *lead = malloc((size_t)m);
    i128 *solution = malloc((size_t)m * sizeof(i128));
    lanes_t *X = NULL;
    if (!root || !needed || !strip || !lead || !solution) {
        status = NO_MEMORY;
        goto done;
    }
    /* placeholder nodes for the leaves keep node indices equal to positions in X */
    for (int32_t i = 0; i < leaves; i++) {
        node_t leaf = {0, 0, 0, 0};
        if (new_node(&P, leaf) < 0) {
            status = NO_MEMORY;
            goto done;
        }
    }
    int smallest = words[0];
    for (int j = 0; j < m; j++) {
        const uint8_t *w = words + (size_t)j * n;
        if (w[0] != smallest) {
            status = BAD_INPUT;
            goto done;
        }
        uint64_t code = 0;
        for (int i = 0; i < n; i++) {
            if (w[i] >= n_letters) {
                status = BAD_INPUT;
                goto done;
            }
            code = code << al.bits | (uint64_t)(w[i] + 1);
        }
        int k = 0, len = n;
        /* strip leading smallest letters while the standard factorisation is (a, rest) */
        while (len > 1 && right_factor_length(&al, code, len) == len - 1 &&
               (int)(code >> ((len - 1) * al.bits)) == smallest + 1) {
            code = subword(&al, code, len, 1, len - 1);
            len--;
            k++;
        }
        int l = 0;
        while (l < n && w[l] == smallest) l++;
        strip[j] = (int8_t)k;
        lead[j] = (int8_t)l;
        root[j] = node_of(&P, code, len, k);
        if (P.status) {
            status = P.status;
            goto done;
        }
        needed[j] = P.count;
    }
    *n_nodes = P.count;
    X = aligned_alloc(64, ((size_t)P.count * sizeof(lanes_t) + 63) / 64 * 64);
    if (!X) {
        status = NO_MEMORY;
        goto done;
    }
    int32_t evaluated = leaves;
    for (int t0 = 0; t0 < m; t0 += LANES) {
        int width = m - t0 < LANES ? m - t0 : LANES;
        for (int l = 0; l < n_letters; l++)
            for (int o = 0; o < n; o++) {
                lanes_t v = {0};
                for (int s = 0; s < width; s++) v[s] = words[(size_t)(t0 + s) * n + o] == l;
                X[l * n + o] = v;
            }
        evaluated = needed[t0 + width - 1];
        run_programme(X, P.nodes, leaves, evaluated);
        for (int s = 0; s < width; s++) {
            int t = t0 + s;
            i128 acc = 0, term;
            for (int j = 0; j < t; j++) {
                if (strip[j] > lead[t]) continue;
                int32_t entry = X[root[j]][s];
                if (!entry || !solution[j]) continue;
                if (__builtin_mul_overflow((i128)entry, solution[j], &term) || __builtin_add_overflow(acc, term, &acc)) {
                    status = OVERFLOW;
                    goto done;
                }
            }
            i128 z = join128(rhs_hi[t], rhs_lo[t]);
            if (__builtin_sub_overflow(z, acc, &solution[t])) {
                status = OVERFLOW;
                goto done;
            }
            out_hi[t] = (int64_t)(solution[t] >> 64);
            out_lo[t] = (uint64_t)solution[t];
        }
    }
done:
    free(root);
    free(needed);
    free(strip);
    free(lead);
    free(solution);
    free(X);
    free(P.nodes);
    free(P.table);
    return status;
}

/* ---- Lyndon words ------------------------------------------------------------------------------------------ */

/* Duval's generation (each prenecklace from its predecessor), keeping the Lyndon words of exact length n; returns
 * their number, or -1 when more than `room` would be written. */
static Py_ssize_t lyndon_words(int n_letters, int n, uint8_t *out, Py_ssize_t room) {
    uint8_t w[256];
    int len = 1;
    Py_ssize_t count = 0;
    w[0] = 0;
    while (len > 0) {
        if (len == n) {
            if (count == room) return -1;
            memcpy(out + count * n, w, (size_t)n);
            count++;
        }
        int m = len;
        while (len < n) {
            w[len] = w[len - m];
            len++;
        }
        while (len > 0 && w[len - 1] == n_letters - 1) len--;
        if (len > 0) w[len - 1]++;
    }
    return count;
}

/* ---- Goldberg's coefficients: the right sides ----------------------------------------------------------- */

/* The coefficient of a word w in log(e^{X_0} ... e^{X_{r-1}}) is sum_k (-1)^{k+1}/k sum over segmentations of w
 * into k blocks of prod_blocks E(block), where E(u) = 1/prod_l c_l(u)! if u is nondecreasing (c_l its letter
 * counts) and 0 otherwise (Goldberg 1956).  Blocks never cross a descent, so the generating polynomial in k is
 * the product over the maximal nondecreasing runs of w of one polynomial per run.  Scaled by the run's length
 * L, R(x) = sum_k x^k L! sum_{segmentations of the run into k blocks} prod E(block) has integer coefficients
 * (each block contributes a binomial times a multinomial), and with D = lcm(1..n) n! the integer
 *
 *     N_w = (n! / prod_runs L!) sum_k (-1)^{k+1} (lcm(1..n) / k) [x^k] prod_runs R(x)
 *
 * is D times the coefficient.  Everything is 128-bit with overflow checks; the N_w and D of one degree are
 * returned divided by their common gcd. */

static i128 factorial128[34];

static void init_factorials(void) {
    if (factorial128[0]) return;
    factorial128[0] = 1;
    for (int i = 1; i < 34; i++) factorial128[i] = factorial128[i - 1] * i; /* 33! < 2^127 */
}

/* R(x) of the nondecreasing run (letters run[0..L-1]): out[0..L]; returns OK or OVERFLOW. */
static int run_polynomial(int n_letters, const uint8_t *run, int L, i128 *out) {
    i128 ways[32][33];
    int counts[256];
    memset(ways, 0, sizeof(ways));
    ways[0][0] = 1;
    for (int j = 1; j <= L; j++) {
        for (int i = 0; i < j; i++) {
            /* block run[i:j]: weight C(j, i) (j - i)! / prod c! = j! / (i! prod c!) */
            memset(counts, 0, sizeof(int) * (size_t)n_letters);
            for (int t = i; t < j; t++) counts[run[t]]++;
            i128 weight = factorial128[j] / factorial128[i];
            for (int l = 0; l < n_letters; l++) weight /= factorial128[counts[l]];
            for (int k = 0; k <= i; k++) {
                i128 term;
                if (!ways[i][k]) continue;
                if (__builtin_mul_overflow(ways[i][k], weight, &term) ||
                    __builtin_add_overflow(ways[j][k + 1], term, &ways[j][k + 1]))
                    return OVERFLOW;
            }
        }
    }
    for (int k = 0; k <= L; k++) out[k] = ways[L][k];
    return OK;
}

static u128 gcd128(u128 a, u128 b) {
    while (b) {
        u128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int goldberg_rhs(int n, int n_letters, Py_ssize_t m, const uint8_t *words, int64_t *out_hi, uint64_t *out_lo,
                        i128 *denominator, i128 *cache) {
    if (n < 1 || n > 31 || n_letters < 1 || n_letters > 255 || m < 0) return BAD_INPUT;
    init_factorials();
    i128 lcm = 1;
    for (int k = 2; k <= n; k++) lcm = lcm / (i128)gcd128((u128)lcm, (u128)k) * k;
    i128 D;
    if (__builtin_mul_overflow(lcm, factorial128[n], &D)) return OVERFLOW;
    /* products[r] = prod of the first r runs' polynomials (degree <= n); shared with the previous word */
    i128 products[33][33];
    int run_end[33], runs = 0, run_scale_len[33];
    const uint8_t *previous = NULL;
    u128 g = (u128)D;
    memset(products, 0, sizeof(products));
    products[0][0] = 1;
    for (Py_ssize_t t = 0; t < m; t++) {
        const uint8_t *w = words + (size_t)t * n;
        for (int i = 0; i < n; i++)
            if (w[i] >= n_letters) return BAD_INPUT;
        int p = 0; /* common prefix with the previous word */
        if (previous)
            while (p < n && previous[p] == w[p]) p++;
        int keep = 0; /* runs ending (at a descent) strictly inside the common prefix are unchanged */
        while (keep < runs && run_end[keep] < p) keep++;
        runs = keep;
        int start = runs ? run_end[runs - 1] : 0;
        while (start < n) {
            int end = start + 1;
            while (end < n && w[end - 1] <= w[end]) end++;
            i128 own[33], *poly = own;
            if (cache) { /* two letters: a run is A^a B^b, its polynomial computed once per (a, b) */
                int a = 0;
                while (start + a < end && w[start + a] == 0) a++;
                poly = cache + (size_t)(a * 32 + (end - start - a)) * 33;
                if (!poly[0] && !poly[end - start]) { /* R(x) has x^L coefficient L! != 0 once computed */
                    int status = run_polynomial(n_letters, w + start, end - start, poly);
                    if (status) return status;
                }
            } else {
                int status = run_polynomial(n_letters, w + start, end - start, own);
                if (status) return status;
            }
            int top = start; /* degree of products[runs] */
            memset(products[runs + 1], 0, sizeof(products[0]));
            for (int a = 0; a <= top; a++) {
                if (!products[runs][a]) continue;
                for (int b = 0; b <= end - start; b++) {
                    i128 term;
                    if (!poly[b]) continue;
                    if (__builtin_mul_overflow(products[runs][a], poly[b], &term) ||
                        __builtin_add_overflow(products[runs + 1][a + b], term, &products[runs + 1][a + b]))
                        return OVERFLOW;
                }
            }
            run_end[runs] = end < n ? end : n + 1; /* the last run is never shared */
            run_scale_len[runs] = end - start;
            runs++;
            start = end;
        }
        i128 sum = 0, term, scale = factorial128[n];
        for (int r = 0; r < runs; r++) scale /= factorial128[run_scale_len[r]];
        for (int k = 1; k <= n; k++) {
            if (!products[runs][k]) continue;
            if (__builtin_mul_overflow(products[runs][k], lcm / k, &term)) return OVERFLOW;
            if (k % 2 ? __builtin_add_overflow(sum, term, &sum) : __builtin_sub_overflow(sum, term, &sum))
                return OVERFLOW;
        }
        if (__builtin_mul_overflow(sum, scale, &sum)) return OVERFLOW;
        out_hi[t] = (int64_t)(sum >> 64);
        out_lo[t] = (uint64_t)sum;
        if (g != 1) g = gcd128(g, (u128)(sum < 0 ? -sum : sum));
        previous = w;
    }
    for (Py_ssize_t t = 0; t < m; t++) {
        i128 v = join128(out_hi[t], out_lo[t]);
        v /= (i128)g;
        out_hi[t] = (int64_t)(v >> 64);
        out_lo[t] = (uint64_t)v;
    }
    *denominator = D / (i128)g;
    return OK;
}

/* ---- a whole degree: the blocks by multidegree, the solve, the reduced terms --------------------------------- */

typedef struct {
    const uint8_t *counts; /* [m, n_letters] letter counts of each word */
    int n_letters;
} count_order_t;

static count_order_t order_by; /* qsort has no context argument: level_blocks runs holding the GIL */

static int compare_counts(const void *a, const void *b) {
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    int c = memcmp(order_by.counts + (size_t)i * order_by.n_letters, order_by.counts + (size_t)j * order_by.n_letters,
                   (size_t)order_by.n_letters);
    return c ? -c : (i > j) - (i < j); /* blocks with more of the small letters first, Lyndon order inside */
}

/* Solve every multidegree block of one degree whose index is part mod parts (blocks by decreasing size, so that
 * threads share the work), each by solve_block on its gathered words; out receives the solution at the words'
 * own positions (blocks with a zero right side: zeros). */
static int solve_level(int n, int n_letters, Py_ssize_t m, const uint8_t *words, const int64_t *rhs_hi,
                       const uint64_t *rhs_lo, int64_t *out_hi, uint64_t *out_lo, int part, int parts,
                       const int32_t *order, const int32_t *starts, int n_blocks) {
    int status = OK;
    Py_ssize_t largest = 0;
    for (int b = 0; b < n_blocks; b++)
        if (starts[b + 1] - starts[b] > largest) largest = starts[b + 1] - starts[b];
    uint8_t *w = malloc((size_t)largest * n + 1);
    int64_t *h = malloc((size_t)largest * 8 + 8), *oh = malloc((size_t)largest * 8 + 8);
    uint64_t *l = malloc((size_t)largest * 8 + 8), *ol = malloc((size_t)largest * 8 + 8);
    if (!w || !h || !oh || !l || !ol) {
        status = NO_MEMORY;
        goto done;
    }
    for (int b = part; b < n_blocks; b += parts) {
        int32_t size = starts[b + 1] - starts[b];
        const int32_t *members = order + starts[b];
        int zero = 1;
        for (int32_t j = 0; j < size; j++) {
            int32_t t = members[j];
            memcpy(w + (size_t)j * n, words + (size_t)t * n, (size_t)n);
            h[j] = rhs_hi[t];
            l[j] = rhs_lo[t];
            if (h[j] || l[j]) zero = 0;
        }
        if (zero) {
            for (int32_t j = 0; j < size; j++) out_hi[members[j]] = 0, out_lo[members[j]] = 0;
            continue;
        }
        int64_t nodes;
        status = solve_block(n, n_letters, size, w, h, l, oh, ol, &nodes);
        if (status) goto done;
        for (int32_t j = 0; j < size; j++) out_hi[members[j]] = oh[j], out_lo[members[j]] = ol[j];
    }
done:
    free(w);
    free(h);
    free(oh);
    free(l);
    free(ol);
    return status;
}

/* The blocks of one degree: positions grouped by letter counts (order) and each block's range in it (starts),
 * blocks sorted by decreasing size.  Returns the number of blocks, or -1 when out of memory. */
static int level_blocks(int n, int n_letters, Py_ssize_t m, const uint8_t *words, int32_t *order, int32_t *starts) {
    uint8_t *counts = calloc((size_t)m * n_letters + 1, 1);
    if (!counts) return -1;
    for (Py_ssize_t t = 0; t < m; t++) {
        order[t] = (int32_t)t;
        for (int i = 0; i < n; i++) counts[(size_t)t * n_letters + words[(size_t)t * n + i]]++;
    }
    order_by.counts = counts;
    order_by.n_letters = n_letters;
    qsort(order, (size_t)m, sizeof(int32_t), compare_counts);
    int n_blocks = 0;
    for (Py_ssize_t j = 0; j < m; j++)
        if (!j || memcmp(counts + (size_t)order[j] * n_letters, counts + (size_t)order[j - 1] * n_letters,
                         (size_t)n_letters))
            starts[n_blocks++] = (int32_t)j;
    starts[n_blocks] = (int32_t)m;
    free(counts);
    /* decreasing size (a stable insertion sort of the few block ranges, moving the order segments with them) */
    int32_t *copy = malloc((size_t)m * sizeof(int32_t) + 4), *range = malloc(2 * sizeof(int32_t) * (n_blocks + 1));
    if (!copy || !range) {
        free(copy);
        free(range);
        return -1;
    }
    for (int b = 0; b < n_blocks; b++) range[2 * b] = starts[b], range[2 * b + 1] = starts[b + 1];
    for (int b = 1; b < n_blocks; b++) {
        int32_t lo = range[2 * b], hi = range[2 * b + 1];
        int c = b;
        while (c > 0 && range[2 * c - 1] - range[2 * c - 2] < hi - lo) {
            range[2 * c] = range[2 * c - 2];
            range[2 * c + 1] = range[2 * c - 1];
            c--;
        }
        range[2 * c] = lo;
        range[2 * c + 1] = hi;
    }
    int32_t at = 0;
    for (int b = 0; b < n_blocks; b++) {
        memcpy(copy + at, order + range[2 * b], sizeof(int32_t) * (size_t)(range[2 * b + 1] - range[2 * b]));
        starts[b] = at;
        at += range[2 * b + 1] - range[2 * b];
    }
    starts[n_blocks] = at;
    memcpy(order, copy, (size_t)m * sizeof(int32_t));
    free(copy);
    free(range);
    return n_blocks;
}

/* ---- Python binding ---------------------------------------------------------------------------------------- */

static PyObject *py_lyndon_words(PyObject *self, PyObject *args) {
    (void)self;
    int n_letters, n;
    Py_ssize_t room;
    if (!PyArg_ParseTuple(args, "iin", &n_letters, &n, &room)) return NULL;
    if (n_letters < 1 || n_letters > 255 || n < 1 || n > 255 || room < 0) {
        PyErr_SetString(PyExc_ValueError, "lyndon_words: n_letters in [1, 255], degree in [1, 255], room >= 0");
        return NULL;
    }
    PyObject *buffer = PyBytes_FromStringAndSize(NULL, room * n);
    if (!buffer) return NULL;
    Py_ssize_t count;
    uint8_t *out = (uint8_t *)PyBytes_AS_STRING(buffer);
    Py_BEGIN_ALLOW_THREADS
    count = lyndon_words(n_letters, n, out, room);
    Py_END_ALLOW_THREADS
    if (count < 0) {
        Py_DECREF(buffer);
        PyErr_SetString(PyExc_ValueError, "lyndon_words: more words than room");
        return NULL;
    }
    if (count < room && _PyBytes_Resize(&buffer, count * n) < 0) return NULL;
    return buffer;
}

static PyObject *py_solve_block(PyObject *self, PyObject *args) {
    (void)self;
    int n, n_letters;
    Py_buffer words, rhs_hi, rhs_lo, out_hi, out_lo;
    if (!PyArg_ParseTuple(args, "iiy*y*y*w*w*", &n, &n_letters, &words, &rhs_hi, &rhs_lo, &out_hi, &out_lo))
        return NULL;
    Py_ssize_t m = rhs_hi.len / 8;
    int64_t n_nodes = 0;
    int status = BAD_INPUT;
    if (n > 0 && words.len == m * n && rhs_lo.len == m * 8 && out_hi.len == m * 8 && out_lo.len == m * 8 &&
        m < INT32_MAX) {
        Py_BEGIN_ALLOW_THREADS
        status = solve_block(n, n_letters, (int)m, words.buf, rhs_hi.buf, rhs_lo.buf, out_hi.buf, out_lo.buf,
                             &n_nodes);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&words);
    PyBuffer_Release(&rhs_hi);
    PyBuffer_Release(&rhs_lo);
    PyBuffer_Release(&out_hi);
    PyBuffer_Release(&out_lo);
    return Py_BuildValue("iL", status, (long long)n_nodes);
}

static PyObject *py_goldberg_rhs(PyObject *self, PyObject *args) {
    (void)self;
    int n, n_letters;
    Py_buffer words, out_hi, out_lo;
    if (!PyArg_ParseTuple(args, "iiy*w*w*", &n, &n_letters, &words, &out_hi, &out_lo)) return NULL;
    Py_ssize_t m = out_hi.len / 8;
    int status = BAD_INPUT;
    i128 denominator = 0;
    if (n > 0 && words.len == m * n && out_lo.len == m * 8) {
        Py_BEGIN_ALLOW_THREADS
        i128 *cache = n_letters == 2 ? calloc(32 * 32 * 33, sizeof(i128)) : NULL;
        status = n_letters == 2 && !cache ? NO_MEMORY
                                          : goldberg_rhs(n, n_letters, m, words.buf, out_hi.buf, out_lo.buf, &denominator, cache);
        free(cache);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&words);
    PyBuffer_Release(&out_hi);
    PyBuffer_Release(&out_lo);
    return Py_BuildValue("iLK", status, (long long)(denominator >> 64), (unsigned long long)(uint64_t)denominator);
}

static PyObject *py_level_blocks(PyObject *self, PyObject *args) {
    (void)self;
    int n, n_letters;
    Py_buffer words;
    if (!PyArg_ParseTuple(args, "iiy*", &n, &n_letters, &words)) return NULL;
    if (n < 1 || n_letters < 1 || n_letters > 255 || words.len % n) {
        PyBuffer_Release(&words);
        PyErr_SetString(PyExc_ValueError, "level_blocks: degree >= 1, n_letters in [1, 255], whole words");
        return NULL;
    }
    Py_ssize_t m = words.len / n;
    PyObject *order = PyBytes_FromStringAndSize(NULL, m * 4), *starts = PyBytes_FromStringAndSize(NULL, (m + 1) * 4);
    int n_blocks = -1;
    if (order && starts) {
        for (Py_ssize_t i = 0; i < words.len; i++)
            if (((const uint8_t *)words.buf)[i] >= n_letters) {
                n_blocks = -2;
                break;
            }
        if (n_blocks == -1) /* holding the GIL: the sort's comparison reads order_by */
            n_blocks = level_blocks(n, n_letters, m, words.buf, (int32_t *)PyBytes_AS_STRING(order),
                                    (int32_t *)PyBytes_AS_STRING(starts));
    }
    PyBuffer_Release(&words);
    if (!order || !starts || n_blocks < 0) {
        Py_XDECREF(order);
        Py_XDECREF(starts);
        if (n_blocks == -2) PyErr_SetString(PyExc_ValueError, "level_blocks: a letter past n_letters");
        else if (!PyErr_Occurred()) PyErr_NoMemory();
        return NULL;
    }
    if (_PyBytes_Resize(&starts, (Py_ssize_t)(n_blocks + 1) * 4) < 0) {
        Py_DECREF(order);
        return NULL;
    }
    return Py_BuildValue("NN", order, starts);
}

static PyObject *py_solve_level(PyObject *self, PyObject *args) {
    (void)self;
    int n, n_letters, part, parts;
    Py_buffer words, rhs_hi, rhs_lo, out_hi, out_lo, order, starts;
    if (!PyArg_ParseTuple(args, "iiy*y*y*w*w*y*y*ii", &n, &n_letters, &words, &rhs_hi, &rhs_lo, &out_hi, &out_lo,
                          &order, &starts, &part, &parts))
        return NULL;
    Py_ssize_t m = rhs_hi.len / 8;
    int status = BAD_INPUT;
    int n_blocks = (int)(starts.len / 4) - 1;
    int consistent = n > 0 && n <= 31 && words.len == m * n && rhs_lo.len == m * 8 && out_hi.len == m * 8 &&
                     out_lo.len == m * 8 && order.len == m * 4 && n_blocks >= 0 && parts >= 1 && part >= 0 &&
                     m < INT32_MAX;
    if (consistent) {
        const int32_t *o = order.buf, *st = starts.buf;
        for (Py_ssize_t j = 0; j < m && consistent; j++) consistent = o[j] >= 0 && o[j] < m;
        for (int b = 0; b < n_blocks && consistent; b++) consistent = st[b] >= 0 && st[b] <= st[b + 1] && st[b + 1] <= m;
    }
    if (consistent) {
        Py_BEGIN_ALLOW_THREADS
        status = solve_level(n, n_letters, m, words.buf, rhs_hi.buf, rhs_lo.buf, out_hi.buf, out_lo.buf, part, parts,
                             order.buf, starts.buf, n_blocks);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&words);
    PyBuffer_Release(&rhs_hi);
    PyBuffer_Release(&rhs_lo);
    PyBuffer_Release(&out_hi);
    PyBuffer_Release(&out_lo);
    PyBuffer_Release(&order);
    PyBuffer_Release(&starts);
    return PyLong_FromLong(status);
}

static PyObject *int128_to_python(i128 v) {
    if (v >= INT64_MIN && v <= INT64_MAX) return PyLong_FromLongLong((long long)v);
    PyObject *hi = PyLong_FromLongLong((long long)(v >> 64)), *lo = PyLong_FromUnsignedLongLong((uint64_t)v);
    PyObject *shift = PyLong_FromLong(64), *shifted = NULL, *sum = NULL;
    if (hi && lo && shift && (shifted = PyNumber_Lshift(hi, shift))) sum = PyNumber_Add(shifted, lo);
    Py_XDECREF(hi);
    Py_XDECREF(lo);
    Py_XDECREF(shift);
    Py_XDECREF(shifted);
    return sum;
}

static PyObject *py_level_terms(PyObject *self, PyObject *args) {
    /* (positions of the nonzero entries as int64 bytes, their numerators as a list of ints, the denominator), the
     * fraction values / denominator reduced by the gcd of all */
    (void)self;
    Py_buffer hi, lo;
    long long den_hi;
    unsigned long long den_lo;
    if (!PyArg_ParseTuple(args, "y*y*LK", &hi, &lo, &den_hi, &den_lo)) return NULL;
    Py_ssize_t m = hi.len / 8;
    i128 den = join128((int64_t)den_hi, (uint64_t)den_lo);
    if (lo.len != hi.len || den <= 0) {
        PyBuffer_Release(&hi);
        PyBuffer_Release(&lo);
        PyErr_SetString(PyExc_ValueError, "level_terms: equal buffers and a positive denominator");
        return NULL;
    }
    const int64_t *h = hi.buf;
    const uint64_t *l = lo.buf;
    u128 g = (u128)den;
    Py_ssize_t count = 0;
    for (Py_ssize_t t = 0; t < m; t++) {
        i128 v = join128(h[t], l[t]);
        if (!v) continue;
        count++;
        if (g != 1) g = gcd128(g, (u128)(v < 0 ? -v : v));
    }
    int narrow = 1; /* every reduced numerator fits in int64: they come back as int64 bytes, not ints */
    for (Py_ssize_t t = 0; t < m && narrow; t++) {
        i128 v = join128(h[t], l[t]) / (i128)g;
        narrow = v >= INT64_MIN && v <= INT64_MAX;
    }
    PyObject *positions = PyBytes_FromStringAndSize(NULL, count * 8);
    PyObject *numerators = narrow ? PyBytes_FromStringAndSize(NULL, count * 8) : PyList_New(count);
    if (!positions || !numerators) goto fail;
    int64_t *p = (int64_t *)PyBytes_AS_STRING(positions);
    int64_t *q = narrow ? (int64_t *)PyBytes_AS_STRING(numerators) : NULL;
    Py_ssize_t k = 0;
    for (Py_ssize_t t = 0; t < m; t++) {
        i128 v = join128(h[t], l[t]);
        if (!v) continue;
        p[k] = t;
        if (narrow) {
            q[k] = (int64_t)(v / (i128)g);
        } else {
            PyObject *value = int128_to_python(v / (i128)g);
            if (!value) goto fail;
            PyList_SET_ITEM(numerators, k, value);
        }
        k++;
    }
    PyBuffer_Release(&hi);
    PyBuffer_Release(&lo);
    PyObject *denominator = int128_to_python(den / (i128)g);
    if (!denominator) {
        Py_DECREF(positions);
        Py_DECREF(numerators);
        return NULL;
    }
    return Py_BuildValue("NNN", positions, numerators, denominator);
fail:
    PyBuffer_Release(&hi);
    PyBuffer_Release(&lo);
    Py_XDECREF(positions);
    Py_XDECREF(numerators);
    return NULL;
}

static PyObject *py_prefixed_positions(PyObject *self, PyObject *args) {
    /* For each selected word w of the lower length: the position of a^(n - len w) w among the words of length n
     * (both lists sorted, uint8 letters), or -1 where it is not among them. */
    (void)self;
    int n, lower, letter;
    Py_buffer words, lower_words, selected;
    if (!PyArg_ParseTuple(args, "iy*iy*y*i", &n, &words, &lower, &lower_words, &selected, &letter)) return NULL;
    PyObject *out = NULL;
    if (n < 1 || n > 255 || lower < 1 || lower > n || words.len % n || lower_words.len % lower || selected.len % 8) {
        PyErr_SetString(PyExc_ValueError, "prefixed_positions: 1 <= lower <= degree <= 255, whole words");
        goto done;
    }
    Py_ssize_t m = words.len / n, m_lower = lower_words.len / lower, count = selected.len / 8;
    out = PyBytes_FromStringAndSize(NULL, count * 8);
    if (!out) goto done;
    const int64_t *sel = selected.buf;
    int64_t *pos = (int64_t *)PyBytes_AS_STRING(out);
    uint8_t target[256];
    memset(target, letter, (size_t)(n - lower));
    for (Py_ssize_t i = 0; i < count; i++) {
        if (sel[i] < 0 || sel[i] >= m_lower) {
            Py_CLEAR(out);
            PyErr_SetString(PyExc_ValueError, "prefixed_positions: a selected position past the lower words");
            goto done;
        }
        memcpy(target + (n - lower), (const uint8_t *)lower_words.buf + (size_t)sel[i] * lower, (size_t)lower);
        Py_ssize_t a = 0, b = m; /* first row >= target */
        while (a < b) {
            Py_ssize_t c = a + (b - a) / 2;
            if (memcmp((const uint8_t *)words.buf + (size_t)c * n, target, (size_t)n) < 0) a = c + 1;
            else b = c;
        }
        pos[i] = a < m && !memcmp((const uint8_t *)words.buf + (size_t)a * n, target, (size_t)n) ? a : -1;
    }
done:
    PyBuffer_Release(&words);
    PyBuffer_Release(&lower_words);
    PyBuffer_Release(&selected);
    return out;
}

static PyMethodDef methods[] = {
    {"level_blocks", py_level_blocks, METH_VARARGS,
     "level_blocks(n, n_letters, words) -> (order, starts): int32 bytes; the positions of the words grouped by "
     "letter counts (Lyndon order inside), blocks by decreasing size, block b = order[starts[b]:starts[b+1]]."},
    {"solve_level", py_solve_level, METH_VARARGS,
     "solve_level(n, n_letters, words, rhs_hi, rhs_lo, out_hi, out_lo, order, starts, part, parts) -> status: "
     "solve_block on every block b = part mod parts of level_blocks; status as solve_block's."},
    {"level_terms", py_level_terms, METH_VARARGS,
     "level_terms(hi, lo, den_hi, den_lo) -> (positions, numerators, denominator): the nonzero 128-bit entries "
     "over the denominator, reduced by the gcd of all: positions as int64 bytes, numerators as int64 bytes where "
     "all fit and as a list of ints otherwise."},
    {"prefixed_positions", py_prefixed_positions, METH_VARARGS,
     "prefixed_positions(n, words, lower, lower_words, selected, letter) -> int64 bytes: the position of "
     "letter^(n - lower) w among words for each selected lower word w (-1 where absent)."},
    {"goldberg_rhs", py_goldberg_rhs, METH_VARARGS,
     "goldberg_rhs(n, n_letters, words, out_hi, out_lo) -> (status, den_hi, den_lo): Goldberg's coefficients of "
     "the Lyndon words of length n in log(e^{X_0} ... e^{X_{r-1}}) as 128-bit numerators over one denominator, "
     "both divided by their gcd; status 0 ok, 2 a 128-bit overflow, 3 bad input."},
    {"solve_block", py_solve_block, METH_VARARGS,
     "solve_block(n, n_letters, words, rhs_hi, rhs_lo, out_hi, out_lo) -> (status, nodes): one block's exact "
     "forward substitution; status 0 ok, 1 out of memory, 2 a 128-bit overflow, 3 bad input."},
    {"lyndon_words", py_lyndon_words, METH_VARARGS,
     "lyndon_words(n_letters, degree, room) -> bytes: the Lyndon words of length degree, in lexicographic order, "
     "degree bytes (letter indices) each; room is their number (Witt's formula)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lyndon_kernel", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__lyndon_kernel(void) { return PyModule_Create(&module); }
