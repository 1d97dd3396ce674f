/* report.cu — gpuprim_bench's output (declared in engine.cuh): the ratios against the
 * references the operation table names, the one results table, the header and summary,
 * and the JSON file. bench/README.md describes the columns and the JSON fields.
 */
#include "engine.cuh"

#include <cerrno>
#include <cstring>
#include <ctime>

namespace gpb {

/* ---- the references ------------------------------------------------------------------------ */

const OpRef *find_ref(const std::string &op)
{
    for (int i = 0; i < N_OPS; i++) {
        for (int j = 0; j < OPS[i]->nrefs; j++) {
            const OpRef &x = OPS[i]->refs[j];
            const size_t len = strlen(x.op);
            const bool prefix = len > 0 && x.op[len - 1] == ':';
            if (prefix ? op.compare(0, len, x.op) == 0 : op == x.op) return &x;
        }
    }
    return nullptr;
}

/* The operation whose table entry names row op `op` (nullptr for the ceiling rows). */
static const Op *find_op(const std::string &op)
{
    const OpRef *ref = find_ref(op);
    for (int i = 0; i < N_OPS; i++)
        if (ref && ref >= OPS[i]->refs && ref < OPS[i]->refs + OPS[i]->nrefs) return OPS[i];
    return nullptr;
}

/* True when row x is validated, timed, and of op, g's n and g's type (any type where the
 * op's entry says so). */
static bool same_group(const Row &x, const std::string &op, const Row &g)
{
    const OpRef *ref = find_ref(op);
    return x.op == op && x.n == g.n && x.timed && x.ok &&
           (x.type == g.type || (ref && ref->any_type));
}

const Row *find_impl(const Row &g, const std::string &op, const char *impl)
{
    if (!impl) return nullptr;
    for (const Row &x : G.rows)
        if (same_group(x, op, g) && x.impl == impl) return &x;
    return nullptr;
}

void add_note(Row &r, const std::string &extra)
{
    r.note = r.note.empty() ? extra : r.note + "; " + extra;
}

/* Our row r against its op's primary reference (ours_vs) and secondary one (note), then
 * the operation's own note. */
static void ratio_ours(Row &r)
{
    const OpRef *ref = find_ref(r.op);
    if (!ref) return;
    const Row *p = find_impl(r, r.op, ref->primary);
    if (p) {
        r.ratio = p->med / r.med;
        r.ratio_ref = p->impl;
    }
    const Row *s = find_impl(r, r.op, ref->secondary);
    if (s) add_note(r, format("vs %s %.2fx", s->impl.c_str(), s->med / r.med));
    const Op *op = find_op(r.op);
    if (op && op->annotate) op->annotate(r);
}

/* Any other row r against our first row of its group. */
static void ratio_other(Row &r)
{
    for (const Row &x : G.rows)
        if (x.kind == Kind::OURS && same_group(x, r.op, r)) {
            r.ratio = r.med / x.med;
            r.ratio_ref = x.impl;
            return;
        }
}

void compute_ratios()
{
    for (Row &r : G.rows) {
        if (!r.timed || !(r.med > 0) || !r.ok || !find_ref(r.op)) continue;
        if (r.kind == Kind::OURS) ratio_ours(r);
        else if (r.kind != Kind::NA) ratio_other(r);
    }
}

/* ---- the table ----------------------------------------------------------------------------- */

std::string fmt_num(double v, const char *f)
{
    if (std::isnan(v) || std::isinf(v)) return "-";
    return format(f, v);
}

/* The block of row r: one per op / type / n; an op's entry may put its rows in another
 * op's block (sort_pairs in sort's) or group them by op and n only (trap_fn). */
static std::string block_key(const Row &r)
{
    const OpRef *ref = find_ref(r.op);
    const std::string op = ref && ref->block ? std::string(ref->block) : r.op;
    const bool any = ref && ref->any_type;
    return op + "|" + (any ? std::string() : r.type) + "|" + std::to_string(r.n);
}

void print_table(FILE *o)
{
    fprintf(o, "\n%-12s %-4s %-6s %-36s %11s %4s %10s %-7s %6s %8s  %-5s %s\n", "op", "type", "n",
            "impl", "median_ms", "reps", "throughput", "unit", "%ceil", "ours_vs", "check", "note");
    std::string last_key;
    for (const Row &r : G.rows) {
        const std::string key = block_key(r);
        if (!last_key.empty() && key != last_key) fputc('\n', o);
        last_key = key;
        std::string med =
            r.kind == Kind::NA ? (r.skipped ? "skipped" : "n/a") : fmt_num(r.med, "%.4f");
        fprintf(o, "%-12s %-4s %-6s %-36s %11s %4s %10s %-7s %6s %8s  %-5s %s\n", r.op.c_str(),
                r.type.c_str(),
                r.op == "ceiling" ? format("%.0fMiB", r.n / 1048576.0).c_str() : n_str(r.n).c_str(),
                r.impl.c_str(), med.c_str(), r.timed ? std::to_string(r.reps).c_str() : "-",
                fmt_num(r.tput, r.tput >= 100 ? "%.1f" : "%.3f").c_str(), r.unit.c_str(),
                fmt_num(r.pct, "%.1f").c_str(), fmt_num(r.ratio, "%.2fx").c_str(),
                r.ok ? (r.skipped ? "skip" : (r.kind == Kind::NA ? "n/a" : "ok")) : "FAIL",
                r.ok ? r.note.c_str() : (r.check + (r.note.empty() ? "" : " | " + r.note)).c_str());
    }
}

/* ---- JSON ------------------------------------------------------------------------------------ */

std::string json_str(const std::string &s)
{
    std::string o = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            o += '\\';
            o += (char)c;
        } else if (c < 0x20) {
            o += format("\\u%04x", c);
        } else {
            o += (char)c;
        }
    }
    return o + "\"";
}

std::string json_num(double v)
{
    if (std::isnan(v) || std::isinf(v)) return "null";
    return format("%.9g", v);
}

/* The current UTC time, ISO 8601. */
static std::string iso_date()
{
    const time_t now = time(nullptr);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    char b[64];
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    return b;
}

const char *status_word(int code)
{
    switch (code) {
    case EXIT_OK: return "ok";
    case EXIT_INCOMPLETE: return "incomplete";
    default: return G.fatal.empty() ? "failed" : "fatal";
    }
}

/* The JSON members before the rows: tool, version, device, run parameters, ceilings and
 * the operations' own members. */
static void json_head(FILE *f)
{
    const cudaDeviceProp &p = G.prop;
    fprintf(f, "{\n  \"tool\": \"gpuprim_bench\",\n");
    fprintf(f, "  \"gpuprim_version\": %s,\n", json_str(gp_version()).c_str());
    fprintf(f, "  \"git_commit\": %s,\n", json_str(gp_git_commit()).c_str());
    fprintf(f, "  \"date\": %s,\n", json_str(iso_date()).c_str());
    fprintf(f, "  \"command\": %s,\n", json_str(G.cmdline).c_str());
    fprintf(f,
            "  \"device\": {\"name\": %s, \"sm_count\": %d, \"cc\": \"%d.%d\", \"clock_khz\": %d, "
            "\"mem_clock_khz\": %d, \"mem_bus_width_bits\": %d, \"l2_bytes\": %d, "
            "\"global_mem_bytes\": %zu},\n",
            json_str(p.name).c_str(), p.multiProcessorCount, p.major, p.minor, G.clock_khz,
            G.mem_clock_khz, p.memoryBusWidth, p.l2CacheSize, p.totalGlobalMem);
    fprintf(f, "  \"cuda_runtime\": %d,\n", CUDART_VERSION);
    fprintf(f, "  \"seed\": %llu,\n  \"base_reps\": %d,\n  \"l2_flush_bytes\": %zu,\n", G.opt.seed,
            G.opt.reps, FLUSH_BYTES);
    fprintf(f,
            "  \"ceilings\": {\"read_kernel_gbps\": %s, \"d2d_copy_gbps\": %s, \"read_ms\": %s, "
            "\"copy_ms\": %s, \"check\": %s},\n",
            json_num(G.read_gbps).c_str(), json_num(G.copy_gbps).c_str(),
            json_num(G.read_ms).c_str(), json_num(G.copy_ms).c_str(),
            json_str(G.ceiling_check).c_str());
    for (int i = 0; i < N_OPS; i++)
        if (OPS[i]->json) OPS[i]->json(f);
}

/* One row as a JSON object (no line end). */
static void json_row(FILE *f, const Row &r)
{
    fprintf(
        f,
        "    {\"op\": %s, \"type\": %s, \"n\": %lld, \"impl\": %s, \"kind\": %s, \"timed\": %s, "
        "\"reps\": %d, \"median_ms\": %s, \"min_ms\": %s, \"max_ms\": %s, \"throughput\": %s, "
        "\"unit\": %s, \"pct_read_ceiling\": %s, \"ratio_ours\": %s, \"ratio_ref\": %s, "
        "\"valid\": %s, \"skipped\": %s, \"check\": %s, \"note\": %s}",
        json_str(r.op).c_str(), json_str(r.type).c_str(), r.n, json_str(r.impl).c_str(),
        json_str(kind_name(r.kind)).c_str(), r.timed ? "true" : "false", r.reps,
        json_num(r.med).c_str(), json_num(r.mn).c_str(), json_num(r.mx).c_str(),
        json_num(r.tput).c_str(), json_str(r.unit).c_str(), json_num(r.pct).c_str(),
        json_num(r.ratio).c_str(), json_str(r.ratio_ref).c_str(), r.ok ? "true" : "false",
        r.skipped ? "true" : "false", json_str(r.check).c_str(), json_str(r.note).c_str());
}

bool write_json(const std::string &path, int code)
{
    FILE *f = fopen(path.c_str(), "w");
    if (!f) {
        fprintf(stderr, "gpuprim_bench: cannot write %s: %s\n", path.c_str(), strerror(errno));
        return false;
    }
    json_head(f);
    fprintf(f, "  \"rows\": [\n");
    for (size_t i = 0; i < G.rows.size(); i++) {
        json_row(f, G.rows[i]);
        fprintf(f, "%s\n", i + 1 < G.rows.size() ? "," : "");
    }
    fprintf(f, "  ],\n");
    fprintf(f, "  \"failures\": %d,\n  \"skipped_groups\": %d,\n  \"fatal\": %s,\n", G.failures,
            G.skipped_groups, G.fatal.empty() ? "null" : json_str(G.fatal).c_str());
    fprintf(f, "  \"total_seconds\": %.1f,\n  \"status\": %s,\n  \"exit_code\": %d\n}\n",
            elapsed_s(), json_str(status_word(code)).c_str(), code);
    const bool ok = fflush(f) == 0 && !ferror(f);
    if (fclose(f) != 0 || !ok) {
        fprintf(stderr, "gpuprim_bench: error writing %s\n", path.c_str());
        return false;
    }
    return true;
}

/* ---- header and summary ---------------------------------------------------------------------- */

void print_header(FILE *o)
{
    const cudaDeviceProp &p = G.prop;
    fprintf(o, "gpuprim_bench %s (commit %s), %s\n", gp_version(), gp_git_commit(),
            iso_date().c_str());
    fprintf(o,
            "device: %s, cc %d.%d, %d SMs, SM clock %.0f MHz, memory clock %.0f MHz, %d-bit bus, "
            "L2 %.0f MiB, %.1f GiB\n",
            p.name, p.major, p.minor, p.multiProcessorCount, G.clock_khz / 1000.0,
            G.mem_clock_khz / 1000.0, p.memoryBusWidth, p.l2CacheSize / 1048576.0,
            p.totalGlobalMem / 1073741824.0);
    fprintf(o,
            "seed %llu%s, reps %d (fewer above 20 ms), L2 flush before each rep: %zu MiB memset + "
            "%zu MiB read\n",
            G.opt.seed, G.opt.seed_given ? "" : " (from the clock)", G.opt.reps, FLUSH_BYTES >> 20,
            FLUSH_BYTES >> 20);
}

/* The meaning of ours_vs, naming each row op's reference by the legend of its entry. */
static void print_legend(FILE *o)
{
    std::string refs;
    for (int i = 0; i < N_OPS; i++) {
        for (int j = 0; j < OPS[i]->nrefs; j++) {
            const OpRef &x = OPS[i]->refs[j];
            if (!x.legend) continue;
            std::string label = x.op;
            if (!label.empty() && label.back() == ':') label.pop_back();
            refs += (refs.empty() ? "" : ", ") + label + ": " + x.legend;
        }
    }
    fprintf(o,
            "ours_vs = time(other) / time(ours), > 1: ours faster; on our rows 'other' is the CUB "
            "reference (%s)\n",
            refs.c_str());
}

/* Each of our rows at the largest n it ran at, in the order the rows first appeared. */
static void print_headline(FILE *o)
{
    fprintf(o, "\nheadline (largest n per op / type):\n");
    std::vector<std::string> seen;
    for (size_t i = G.rows.size(); i-- > 0;) {
        const Row &r = G.rows[i];
        if (r.kind != Kind::OURS) continue;
        const std::string key = r.op + "|" + r.type + "|" + r.impl;
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
    }
    for (auto it = seen.rbegin(); it != seen.rend(); ++it) {
        const Row *best = nullptr;
        for (const Row &r : G.rows)
            if (r.kind == Kind::OURS && r.op + "|" + r.type + "|" + r.impl == *it &&
                (!best || r.n > best->n))
                best = &r;
        if (!best) continue;
        fprintf(o, "  %-12s %-4s %-6s %-34s %s ms  %s %s%s  %s %s\n", best->op.c_str(),
                best->type.c_str(), n_str(best->n).c_str(), best->impl.c_str(),
                fmt_num(best->med, "%.4f").c_str(),
                fmt_num(best->tput, best->tput >= 100 ? "%.1f" : "%.3f").c_str(),
                best->unit.c_str(),
                std::isnan(best->pct) ? "" : format(" (%.0f%% of read ceiling)", best->pct).c_str(),
                best->ok ? (best->ratio_ref.empty() ? "" : ("vs " + best->ratio_ref + ":").c_str())
                         : "FAILED",
                best->ok ? fmt_num(best->ratio, "%.2fx").c_str() : best->check.c_str());
    }
}

void print_summary(FILE *o)
{
    fprintf(o,
            "\nread ceiling: %s GB/s (read-only kernel, 16-byte loads); device-to-device "
            "cudaMemcpy: %s GB/s "
            "(read + write bytes)\n",
            fmt_num(G.read_gbps, "%.1f").c_str(), fmt_num(G.copy_gbps, "%.1f").c_str());
    for (int i = 0; i < N_OPS; i++)
        if (OPS[i]->summary) OPS[i]->summary(o);
    print_legend(o);
    print_headline(o);
}

} // namespace gpb
