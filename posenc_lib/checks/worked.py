"""The worked solutions' code, by solutions notebook and function: what `q1.solution()`
shows when no solutions notebook is near the learner's folder. Generated: do not edit.
Write it again with `python -m posenc_lib.checks.ship_solutions solutions` after changing a
solution (tests/checks/test_solutions_shipped.py fails until then)."""

WORKED = {
    "01_order_blindness.ipynb": {
        "add_positions": (
            "def add_positions(x):\n"
            '    """x (T, D) -> x + a signal whose row t depends only on the position t."""\n'
            "    n_pos, dim = x.shape\n"
            "    t = torch.arange(n_pos, dtype=x.dtype)[:, None]  # (T, 1)\n"
            "    frequencies = 1.0 / 10000 ** (torch.arange(0, dim, 2, dtype=x.dtype) / dim)  # (D/2,)\n"
            "    angles = t * frequencies  # (T, D/2)\n"
            "    signal = torch.stack((angles.sin(), angles.cos()), dim=-1).reshape(n_pos, dim)  # (T, D)\n"
            "    return x + signal"
        ),
        "attention": (
            "def attention(x, w_q, w_k, w_v):\n"
            '    """x (T, D), w_q and w_k (D, d_k), w_v (D, d_v) -> outputs (T, d_v)."""\n'
            "    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (T, d_k), (T, d_k), (T, d_v)\n"
            "    scores = q @ k.T / math.sqrt(q.shape[1])  # (T, T): query i against key j\n"
            "    weights = torch.softmax(scores, dim=-1)  # each row sums to 1\n"
            "    return weights @ v  # (T, d_v)"
        ),
        "equivariance_gap": (
            "def equivariance_gap(f, x, order):\n"
            '    """f: (T, D) -> (T, D\'); x (T, D); order: a permutation of 0..T-1 -> max |f(PX) - P f(X)|."""\n'
            "    reordered_input = f(x[order])  # f(PX): (T, D')\n"
            "    reordered_output = f(x)[order]  # P f(X): (T, D')\n"
            "    return float((reordered_input - reordered_output).abs().max())"
        ),
        "permutation_matrix": (
            "def permutation_matrix(order):\n"
            '    """order: a permutation of 0..T-1 -> P (T, T) with (P @ X)[i] = X[order[i]]."""\n'
            "    n = len(order)\n"
            "    p = torch.zeros(n, n)\n"
            "    for row, column in enumerate(order):\n"
            "        p[row, column] = 1.0  # row i of P @ X picks row order[i] of X\n"
            "    return p"
        ),
        "unchanged_rows": (
            "def unchanged_rows(T, i, j):\n"
            '    """Rows of causal self-attention unchanged when the words at i and j swap."""\n'
            "    if i == j:\n"
            "        return list(range(T))  # nothing moved\n"
            "    first, last = min(i, j), max(i, j)\n"
            "    # Before the swap, a row sees neither word; after both, it sees the same set of words.\n"
            "    return [t for t in range(T) if t < first or t > last]"
        ),
    },
    "02_naive_encodings.ipynb": {
        "binary_encoding": (
            "def binary_encoding(n_positions, n_bits):\n"
            '    """n_positions, n_bits -> (n_positions, n_bits) float table; column j holds bit j of t."""\n'
            "    t = torch.arange(n_positions)[:, None]  # (T, 1) positions\n"
            "    j = torch.arange(n_bits)[None, :]  # (1, n_bits) bit numbers, least significant first\n"
            "    return ((t >> j) & 1).float()  # (T, n_bits): bit j of t is (t >> j) & 1"
        ),
        "first_offset_below": (
            "def first_offset_below(table, threshold=0.5):\n"
            '    """table (T, D), a threshold -> the first offset k >= 1 whose mean cos(P_t, P_t+k) < threshold."""\n'
            "    unit = table / table.norm(dim=-1, keepdim=True)  # (T, D) rows of length 1\n"
            "    cosines = unit @ unit.T  # (T, T): cos(P_s, P_t); the k-th diagonal holds the pairs k apart\n"
            "    n_positions = table.shape[0]\n"
            "    for k in range(1, n_positions):\n"
            "        if cosines.diagonal(k).mean() < threshold:  # the mean over the T - k pairs\n"
            "            return k\n"
            "    return n_positions  # no offset drops below: the answer lies past the table's end"
        ),
        "neighbour_unevenness": (
            "def neighbour_unevenness(table):\n"
            '    """table (T, D) -> longest neighbour step / shortest, a float."""\n'
            "    steps = (table[1:] - table[:-1]).norm(dim=-1)  # (T-1,): ||table[t+1] - table[t]||\n"
            "    return float(steps.max() / steps.min())"
        ),
        "normalized_gap": (
            "def normalized_gap(i, j, lengths):\n"
            '    """Token positions i, j and L sequence lengths -> (L,) gaps between their codes, one per length."""\n'
            "    n = torch.tensor(lengths, dtype=torch.float32)  # (L,)\n"
            "    return abs(i - j) / (n - 1)  # (L,)"
        ),
    },
    "03_sinusoidal.ipynb": {
        "direction_gap": (
            "def direction_gap(table):\n"
            '    """table (T, D) -> max |<PE_t, PE_(t+k)> - <PE_t, PE_(t-k)>| over t and k, as a float."""\n'
            "    table = table.double()\n"
            "    gram = table @ table.T  # (T, T): gram[t, s] = <PE_t, PE_s>\n"
            "    n, worst = table.shape[0], 0.0\n"
            "    for k in range(1, (n - 1) // 2 + 1):\n"
            "        t = torch.arange(k, n - k)  # the positions with both t - k and t + k in the table\n"
            "        gap = (gram[t, t + k] - gram[t, t - k]).abs().max()\n"
            "        worst = max(worst, float(gap))\n"
            "    return worst"
        ),
        "score_terms": (
            "def score_terms(word_q, pos_q, word_k, pos_k):\n"
            '    """(4, Tq, Tk): word.word, word.pos, pos.word, pos.pos for every query (row) and key (column)."""\n'
            "    pairs = ((word_q, word_k), (word_q, pos_k), (pos_q, word_k), (pos_q, pos_k))\n"
            "    return torch.stack([q @ k.T for q, k in pairs])  # (4, Tq, Tk): (Tq, D) @ (D, Tk) each"
        ),
        "shift_matrix": (
            "def shift_matrix(k, d_model, base=10000.0):\n"
            '    """(D, D) matrix M_k with PE_(t+k) = M_k @ PE_t for every t."""\n'
            "    omega = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (D/2,)\n"
            "    m = torch.zeros(d_model, d_model, dtype=torch.float64)\n"
            "    for i, angle in enumerate((k * omega).tolist()):  # pair i advances by k * w_i\n"
            "        c, s = math.cos(angle), math.sin(angle)\n"
            "        # (sin(a + b), cos(a + b)) = (sin a cos b + cos a sin b, cos a cos b - sin a sin b)\n"
            "        m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.tensor([[c, s], [-s, c]])\n"
            "    return m"
        ),
        "sinusoidal_encoding": (
            "def sinusoidal_encoding(n_positions, d_model, base=10000.0):\n"
            '    """(T, D) table: column 2i = sin(t w_i), column 2i + 1 = cos(t w_i), w_i = base ** (-2i / D)."""\n'
            "    t = torch.arange(n_positions, dtype=torch.float64)[:, None]  # (T, 1): positions 0 .. T-1\n"
            "    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (D/2,): 0, 2, 4, ...\n"
            "    angles = t / base ** (two_i / d_model)  # (T, D/2): t * w_i\n"
            "    pairs = torch.stack((angles.sin(), angles.cos()), dim=-1)  # (T, D/2, 2)\n"
            "    return pairs.reshape(n_positions, d_model)  # (T, D): sin, cos, sin, cos, ..."
        ),
        "smallest_base": (
            "def smallest_base(n_positions, d_model, candidates):\n"
            '    """The smallest base in candidates with dist(k) > dist(1) for k = 2 .. n_positions - 1."""\n'
            "    for base in sorted(candidates):  # every one: a larger base is not always safer\n"
            "        table = sinusoidal_encoding(n_positions, d_model, base)  # (T, D)\n"
            "        distance = (table - table[0]).norm(dim=-1)  # (T,): dist(k) for k = 0 .. T-1\n"
            "        if bool((distance[2:] > distance[1]).all()):\n"
            "            return base\n"
            "    return None  # no candidate works (the check's lists always hold one)"
        ),
    },
    "04_relative_bias.ipynb": {
        "cross_attention": (
            "def cross_attention(decoder_x, encoder_x, w_q, w_k, w_v):\n"
            '    """decoder_x (T_dec, D), encoder_x (T_enc, D) -> output (T_dec, d_v)."""\n'
            "    q = decoder_x @ w_q  # (T_dec, d_k): queries from the decoder\n"
            "    k = encoder_x @ w_k  # (T_enc, d_k): keys from the encoder\n"
            "    v = encoder_x @ w_v  # (T_enc, d_v): values from the encoder\n"
            "    weights = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)  # (T_dec, T_enc)\n"
            "    return weights @ v  # (T_dec, d_v)"
        ),
        "diagonal_spread": (
            "def diagonal_spread(matrix):\n"
            '    """matrix (T_q, T_k) -> the largest max - min along a diagonal j - i = d, as a float."""\n'
            "    n_q, n_k = matrix.shape\n"
            "    worst = 0.0\n"
            "    for d in range(-(n_q - 1), n_k):  # bottom-left corner to top-right corner\n"
            "        diagonal = matrix.diagonal(d)  # the entries (i, i + d), where j - i = d\n"
            "        worst = max(worst, float(diagonal.max() - diagonal.min()))\n"
            "    return worst"
        ),
        "relative_bias": (
            "def relative_bias(table, bucket_fn, q_len, k_len):\n"
            '    """table (num_buckets, H) -> bias (H, q_len, k_len); queries are the last q_len positions."""\n'
            "    query_pos = torch.arange(q_len)[:, None] + (k_len - q_len)  # (q_len, 1)\n"
            "    key_pos = torch.arange(k_len)[None, :]  # (1, k_len)\n"
            "    buckets = bucket_fn(key_pos - query_pos)  # (q_len, k_len)\n"
            "    return table[buckets].permute(2, 0, 1)  # (q_len, k_len, H) -> (H, q_len, k_len)"
        ),
        "shaw_logits": (
            "def shaw_logits(q, k, rel_keys, clip):\n"
            '    """q, k (T, d); rel_keys (2 clip + 1, d) -> logits (T, T), e_ij = q_i.(k_j + a_ij) / sqrt(d)."""\n'
            "    n, d = q.shape\n"
            "    offsets = torch.arange(n)[None, :] - torch.arange(n)[:, None]  # (T, T): j - i\n"
            "    a = rel_keys[offsets.clamp(-clip, clip) + clip]  # (T, T, d): a_ij, one row per pair\n"
            "    content = q @ k.T  # (T, T)\n"
            "    position = (q[:, None, :] * a).sum(-1)  # (T, T): q_i . a_ij\n"
            "    return (content + position) / math.sqrt(d)"
        ),
        "t5_bucket": (
            "def t5_bucket(relative_position, bidirectional, num_buckets, max_distance):\n"
            '    """Offsets j - i (an integer tensor) -> T5\'s bucket ids (a LongTensor of the same shape)."""\n'
            "    rel = relative_position.long()\n"
            "    if bidirectional:\n"
            "        n = num_buckets // 2  # buckets per direction\n"
            "        upper = (rel > 0).long() * n  # keys after the query use the upper half\n"
            "        distance = rel.abs()\n"
            "    else:\n"
            "        n = num_buckets\n"
            "        upper = torch.zeros_like(rel)\n"
            "        distance = torch.clamp(-rel, min=0)  # keys after the query: distance 0\n"
            "    exact = n // 2\n"
            "    ratio = torch.clamp(distance, min=exact).float() / exact  # >= 1\n"
            "    log_bucket = exact + (torch.log(ratio) / math.log(max_distance / exact) * (n - exact)).long()\n"
            "    log_bucket = torch.clamp(log_bucket, max=n - 1)  # far is far: the last bucket\n"
            "    return upper + torch.where(distance < exact, distance, log_bucket)"
        ),
    },
    "05_alibi.ipynb": {
        "alibi_slopes": (
            "def alibi_slopes(num_heads):\n"
            '    """num_heads: H >= 1 -> the H slopes, head 1 first (a list of floats)."""\n'
            "    low = 2 ** math.floor(math.log2(num_heads))  # H', the largest power of two <= H\n"
            "    ladder = [2 ** (-8 * h / low) for h in range(1, low + 1)]  # 2^(-8h/H'), h = 1..H'\n"
            "    longer = [2 ** (-8 * h / (2 * low)) for h in range(1, 2 * low + 1)]  # the ladder of 2H' heads\n"
            "    return ladder + longer[0::2][: num_heads - low]  # half a step above heads 1, 2, ..."
        ),
        "causal_alibi_bias": (
            "def causal_alibi_bias(slopes, n):\n"
            '    """slopes (H,), n = T -> bias (H, T, T): -m_h (i - j) for keys j <= i, -inf for j > i."""\n'
            "    i = torch.arange(n)[:, None]  # (T, 1): query positions\n"
            "    j = torch.arange(n)[None, :]  # (1, T): key positions\n"
            "    distance = (i - j).to(slopes.dtype)  # (T, T): how far back key j lies from query i\n"
            "    bias = -slopes[:, None, None] * distance  # (H, T, T): one matrix per head\n"
            '    return bias.masked_fill(j > i, float("-inf"))  # keys after the query cannot be seen'
        ),
        "effective_window": (
            "def effective_window(slopes, factor):\n"
            '    """slopes (H,), factor > 1 -> (H,): the distance d at which exp(-m d) = 1 / factor."""\n'
            "    return math.log(factor) / slopes  # (H,): solve exp(-m d) = 1 / factor for d"
        ),
        "far_attention": (
            "def far_attention(slope, n_keys, distance):\n"
            '    """slope m > 0, n_keys keys, distance >= 0 -> the share of weight on keys with d > distance."""\n'
            "    d = torch.arange(n_keys, dtype=torch.float64)  # (n_keys,): the distance of each key\n"
            "    weights = torch.softmax(-slope * d, dim=0)  # equal content: only the bias differs\n"
            "    return float(weights[d > distance].sum())"
        ),
    },
    "06_rope.ipynb": {
        "apply_rope": (
            "def apply_rope(x, positions, style, base=10000.0):\n"
            '    """x (T, D), positions: T whole numbers, style "half" or "interleaved" -> x rotated, (T, D)."""\n'
            "    n, d = x.shape\n"
            "    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (D/2,)\n"
            "    angles = torch.tensor(positions, dtype=torch.float64)[:, None] * theta  # (T, D/2)\n"
            "    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)\n"
            '    if style == "half":\n'
            "        x1, x2 = x[:, : d // 2], x[:, d // 2 :]  # pair i = dims (i, i + D/2)\n"
            "    else:\n"
            "        x1, x2 = x[:, 0::2], x[:, 1::2]  # pair i = dims (2i, 2i + 1)\n"
            "    y1 = x1 * cos - x2 * sin  # (x1 + i x2) e^(i m theta): counterclockwise\n"
            "    y2 = x1 * sin + x2 * cos\n"
            '    if style == "half":\n'
            "        return torch.cat((y1, y2), dim=-1)  # (T, D)\n"
            "    return torch.stack((y1, y2), dim=-1).reshape(n, d)  # (T, D): y1_0, y2_0, y1_1, y2_1, ..."
        ),
        "decay_bound": (
            "def decay_bound(distance, head_dim, base=10000.0):\n"
            '    """(1 / (D/2)) * sum over j = 1 .. D/2 of |S_j| at m - n = distance, as a float."""\n'
            "    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)  # (D/2,)\n"
            "    phases = distance * theta  # (D/2,): angle of each pair at this distance\n"
            "    real, imag = phases.cos().cumsum(0), phases.sin().cumsum(0)  # S_1 .. S_{D/2}\n"
            "    return float(torch.sqrt(real**2 + imag**2).mean())"
        ),
        "fix_layout": (
            "def fix_layout(w_q, w_k, n_heads, target):\n"
            '    """w_q, w_k (D_in, H * D_h) made for the layout that is not `target` -> (new_w_q, new_w_k)."""\n'
            "    d_head = w_q.shape[1] // n_heads\n"
            "    to_half = torch.cat((torch.arange(0, d_head, 2), torch.arange(1, d_head, 2)))  # (D_h,)\n"
            '    order = to_half if target == "half" else torch.argsort(to_half)  # half -> interleaved: inverse\n'
            "    columns = torch.cat([h * d_head + order for h in range(n_heads)])  # (H * D_h,): head by head\n"
            "    return w_q[:, columns], w_k[:, columns]"
        ),
        "offset_spread": (
            "def offset_spread(rotate, q, k, offset, positions):\n"
            '    """max - min over p in positions of rotate(q, p + offset) @ rotate(k, p), as a float."""\n'
            "    scores = [float(rotate(q, p + offset) @ rotate(k, p)) for p in positions]\n"
            "    return max(scores) - min(scores)"
        ),
        "smallest_base": (
            "def smallest_base(context_length, head_dim):\n"
            '    """The base whose slowest pair\'s wavelength is exactly context_length positions. -> float"""\n'
            "    slowest = head_dim // 2 - 1  # the last pair turns slowest: theta = base ** (-2 * slowest / D)\n"
            "    # 2 pi / theta = L  <=>  base ** (2 * slowest / D) = L / (2 pi)\n"
            "    return (context_length / (2 * math.pi)) ** (head_dim / (2 * slowest))"
        ),
    },
    "07_extrapolation.ipynb": {
        "full_turn_pairs": (
            "def full_turn_pairs(head_dim, base, train_len):\n"
            '    """-> the pair indices i whose angle turns a full circle within distances 0 .. L - 1."""\n'
            "    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)  # (D/2,)\n"
            "    wavelength = 2 * math.pi / theta  # (D/2,): distance of one full turn\n"
            "    return [i for i, w in enumerate(wavelength.tolist()) if w <= train_len - 1]"
        ),
        "new_score_pairs": (
            "def new_score_pairs(curves, train_len, tol):\n"
            '    """curves (H, P, N) -> the pairs whose scores past L leave the training range in some head."""\n'
            "    seen, new = curves[..., :train_len], curves[..., train_len:]  # (H, P, L), (H, P, N - L)\n"
            "    above = (new.amax(-1) - seen.amax(-1)).clamp(min=0)  # (H, P): new highs\n"
            "    below = (seen.amin(-1) - new.amin(-1)).clamp(min=0)  # (H, P): new lows\n"
            "    size = curves.abs().amax(-1)  # (H, P): the largest |value| of each curve\n"
            "    excess = torch.maximum(above, below) / size  # (H, P): a share of the curve's size\n"
            "    return [i for i in range(curves.shape[1]) if bool((excess[:, i] > tol).any())]"
        ),
        "ntk_base": (
            "def ntk_base(base, factor, head_dim):\n"
            '    """base, factor s >= 1, head_dim D -> the NTK-aware base (a float)."""\n'
            "    # theta'_i = (base * s**x) ** (-2i / D) = theta_i * s ** (-2 i x / D). For i = D/2 - 1 this is\n"
            "    # theta_i * s ** (-(D - 2) x / D), which equals theta_i / s when x = D / (D - 2).\n"
            "    return base * factor ** (head_dim / (head_dim - 2))"
        ),
        "yarn_ramp_and_scale": (
            "def yarn_ramp_and_scale(head_dim, base, train_len, factor, beta_fast=32.0, beta_slow=1.0):\n"
            '    """-> (ramp (D/2,) float tensor, 1 = keep theta_i, 0 = divide by s; attention scale float)."""\n'
            "    # r = L * base ** (-2i / D) / (2 pi) = beta  <=>  i = D * ln(L / (2 pi beta)) / (2 ln base)\n"
            "    scale = head_dim / (2 * math.log(base))\n"
            "    low = scale * math.log(train_len / (2 * math.pi * beta_fast))  # fast pairs: more turns\n"
            "    high = scale * math.log(train_len / (2 * math.pi * beta_slow))\n"
            "    low, high = max(math.floor(low), 0), min(math.ceil(high), head_dim - 1)\n"
            "    if low == high:\n"
            "        high += 0.001  # a step rather than a ramp\n"
            "    pair = torch.arange(head_dim // 2, dtype=torch.float64)  # (D/2,)\n"
            "    ramp = 1 - ((pair - low) / (high - low)).clamp(0.0, 1.0)  # 1 below low, 0 above high\n"
            "    attention_scale = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0  # sqrt(1/t)\n"
            "    return ramp, attention_scale"
        ),
    },
    "08_real_model.ipynb": {
        "greedy_generate": (
            "def greedy_generate(model, input_ids, n_new):\n"
            '    """model, input_ids (1, T), n_new -> the new token ids (1, n_new), greedy, with a KV cache."""\n'
            "    with torch.no_grad():\n"
            "        out = model(input_ids, use_cache=True)\n"
            "        token = out.logits[:, -1].argmax(-1, keepdim=True)  # (1, 1)\n"
            "        tokens = [token]\n"
            "        position = input_ids.shape[1]\n"
            "        for _ in range(n_new - 1):\n"
            "            # only the newest token; its position continues the cache (never 0 again)\n"
            "            out = model(\n"
            "                token, cache=out.cache, position_ids=torch.tensor([[position]]), use_cache=True\n"
            "            )\n"
            "            token = out.logits[:, -1].argmax(-1, keepdim=True)\n"
            "            tokens.append(token)\n"
            "            position += 1\n"
            "    return torch.cat(tokens, dim=1)"
        ),
        "rope_from_config": (
            "def rope_from_config(config, seq_len):\n"
            '    """config (dict), seq_len -> (inv_freq (D/2,) float tensor, attention scale float)."""\n'
            '    rope = config.get("rope_parameters") or config.get("rope_scaling") or {}\n'
            '    base = float(rope.get("rope_theta", config.get("rope_theta", 10000.0)))\n'
            '    rope_type = rope.get("rope_type", rope.get("type", "default"))\n'
            '    d = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]\n'
            "    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (D/2,)\n"
            "    scale = 1.0\n"
            '    if rope_type == "linear":\n'
            '        theta = theta / rope["factor"]\n'
            '    elif rope_type == "dynamic":\n'
            '        s, original = rope["factor"], config["max_position_embeddings"]\n'
            "        stretch = s * max(seq_len, original) / original - (s - 1)  # 1 up to L\n"
            "        base = base * stretch ** (d / (d - 2))  # the NTK-aware base for the stretch\n"
            "        theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)\n"
            '    elif rope_type == "yarn":\n'
            '        s = rope["factor"]\n'
            '        original = rope.get("original_max_position_embeddings", config["max_position_embeddings"])\n'
            '        fast, slow = rope.get("beta_fast", 32.0), rope.get("beta_slow", 1.0)\n'
            "\n"
            "        def index(turns):  # the (real) pair index that turns `turns` times over `original`\n"
            "            return d * math.log(original / (turns * 2 * math.pi)) / (2 * math.log(base))\n"
            "\n"
            "        low, high = max(math.floor(index(fast)), 0), min(math.ceil(index(slow)), d - 1)\n"
            "        if low == high:\n"
            "            high += 0.001\n"
            "        keep = 1 - ((torch.arange(d // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)\n"
            "        theta = theta / s * (1 - keep) + theta * keep\n"
            '        scale = rope.get("attention_factor") or 0.1 * math.log(s) + 1\n'
            '    elif rope_type == "llama3":\n'
            '        s, original = rope["factor"], rope["original_max_position_embeddings"]\n'
            '        low, high = rope["low_freq_factor"], rope["high_freq_factor"]\n'
            "        blend = ((original * theta / (2 * math.pi) - low) / (high - low)).clamp(0, 1)\n"
            "        theta = (1 - blend) * theta / s + blend * theta\n"
            "    return theta, float(scale)"
        ),
        "unpermute_gguf": (
            "def unpermute_gguf(w, n_heads):\n"
            '    """w (n_heads * Dh, D_in), GGUF row order -> the same rows in transformers\' order."""\n'
            "    rows, d_in = w.shape\n"
            "    dh = rows // n_heads\n"
            "    # (H, Dh/2 pairs, 2 members, D_in) -> (H, 2 members, Dh/2 pairs, D_in)\n"
            "    return w.reshape(n_heads, dh // 2, 2, d_in).transpose(1, 2).reshape(rows, d_in)"
        ),
    },
}
