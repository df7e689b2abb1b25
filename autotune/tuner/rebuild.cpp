#include "rebuild.hpp"

#include <algorithm>
#include <map>
#include <ostream>

#include "choose.hpp"
#include "device_spec.hpp"
#include "evaluate.hpp"
#include "kiln/error.hpp"
#include "kiln/worklog/worklog.hpp"
#include "open_tuning.hpp"
#include "publish.hpp"
#include "select.hpp"

namespace kiln::tuner {

namespace {

// One tuning context of the kernel in the worklog: its sessions, the latest last.
struct Context {
  std::string key;
  std::vector<worklog::Session> sessions;
  const worklog::Session& latest() const { return sessions.back(); }
};

// The session's device, when it was recorded; a session of an older file may not name it.
std::optional<DeviceInfo> session_device(const worklog::Session& s) {
  if (s.device.empty() || s.device == "{}") return std::nullopt;
  try {
    return model::parse_device_info(s.device, "the device of session " + std::to_string(s.id));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The kernel's contexts on a device the device file accepts (or whose device no session recorded),
// the one with the latest session last. A worklog may hold several: the kernel's sources, the
// compiler or the driver changed between tunings, and each change is a context of its own.
std::vector<Context> contexts_of(const worklog::Worklog& log, const Manifest& m, const Device& spec) {
  std::vector<Context> contexts;
  for (const auto& s : log.sessions()) {
    if (s.kernel != m.kernel) continue;
    if (auto device = session_device(s); device && mismatch(spec, *device)) continue;
    auto it = std::find_if(contexts.begin(), contexts.end(), [&](const Context& c) { return c.key == s.context_key; });
    if (it == contexts.end()) it = contexts.insert(contexts.end(), Context{s.context_key, {}});
    it->sessions.push_back(s);
  }
  // By start, not by id: a merged worklog's ids follow the order of its inputs.
  for (auto& c : contexts) {
    std::stable_sort(c.sessions.begin(), c.sessions.end(),
                     [](const auto& a, const auto& b) { return a.started_at < b.started_at; });
  }
  std::stable_sort(contexts.begin(), contexts.end(),
                   [](const Context& a, const Context& b) { return a.latest().started_at < b.latest().started_at; });
  return contexts;
}

// Whether the context holds a timing or a failure of any of the manifest's variants as this
// manifest generates them (name and source hash): a tuning of other sources or of another space
// (knobs added or renamed) holds none, and a record rebuilt from it would measure nothing.
bool measured_any(const worklog::Worklog& log, const Manifest& m, const Context& c) {
  EvaluationContext ctx;
  ctx.manifest = &m;
  ctx.key_version = key_version_from(c.latest().key_version);
  std::map<std::size_t, std::string> hashes;  // read each variant's source once
  auto matches = [&](const std::string& variant, const std::string& hash) {
    const auto index = m.variant_index(variant);
    if (!index) return false;
    auto it = hashes.find(*index);
    if (it == hashes.end()) it = hashes.emplace(*index, variant_hash(ctx, *index)).first;
    return it->second == hash;
  };
  for (const auto& t : log.timed_medians(c.key, m.kernel)) {
    if (matches(t.variant, t.variant_hash)) return true;
  }
  for (const auto& f : log.variant_failures(c.key, m.kernel)) {
    if (matches(f.key.variant, f.key.variant_hash)) return true;
  }
  return false;
}

std::string describe(const Context& c) {
  return c.key + " (" + std::to_string(c.sessions.size()) + (c.sessions.size() == 1 ? " session, " : " sessions, ") +
         c.sessions.front().started_at + (c.sessions.size() > 1 ? " to " + c.latest().started_at : "") + ")";
}

}  // namespace

void rebuild_record(const RebuildOptions& o, std::ostream& out, std::ostream& err) {
  const KernelTarget target = load_target(o.manifest, o.device_spec);
  const Manifest& m = target.manifest;
  auto log = worklog::Worklog::open(o.worklog, worklog::OpenMode::read_only);
  const std::vector<Context> contexts = contexts_of(log, m, target.spec);
  if (contexts.empty()) {
    throw Error(o.worklog.string() + " has no tuning session of kernel " + m.kernel + " on " + target.spec.name);
  }
  std::string known;  // every context, oldest first, for the messages below
  for (const auto& c : contexts) known += "\n  " + describe(c);
  const Context* chosen = nullptr;
  if (o.context) {
    auto it = std::find_if(contexts.begin(), contexts.end(), [&](const Context& c) { return c.key == *o.context; });
    if (it == contexts.end()) {
      throw Error("--context " + *o.context + ": " + o.worklog.string() + " has no tuning of " + m.kernel + " on " +
                  target.spec.name + " in that context; its contexts, oldest first:" + known);
    }
    if (!measured_any(log, m, *it)) {
      throw Error("--context " + *o.context + ": that tuning of " + m.kernel + " in " + o.worklog.string() +
                  " measured none of the manifest's " + std::to_string(m.variants.size()) +
                  " variants as it generates them (the space or its sources differ from that tuning's); its "
                  "contexts, oldest first:" + known);
    }
    chosen = &*it;
  } else {
    // The newest context that measured this manifest's variants: a tuning of changed sources or of
    // a changed space that was not taken leaves a newer context behind, and one whose variants are
    // not the manifest's would rebuild a record of nothing.
    const auto it = std::find_if(contexts.rbegin(), contexts.rend(),
                                 [&](const Context& c) { return measured_any(log, m, c); });
    if (it == contexts.rend()) {
      throw Error(o.worklog.string() + " holds no tuning of " + m.kernel + " on " + target.spec.name +
                  " that measured any of the manifest's " + std::to_string(m.variants.size()) +
                  " variants as it generates them (the space or its sources differ from every tuning's); its "
                  "contexts, oldest first:" + known);
    }
    chosen = &*it;
    if (contexts.size() > 1) {
      // Say which context was used, and which others there are: the newest that measured the
      // manifest's variants is not always the checkout's either (a tuning of changed kernel code
      // keeps the variants' names and sources).
      const bool newest = chosen == &contexts.back();
      err << "kiln record: " << o.worklog.string() << " holds " << contexts.size() << " tuning contexts of "
          << m.kernel << " on " << target.spec.name << "; using "
          << (newest ? "the newest, " : "the newest that measured the manifest's variants, ") << describe(*chosen)
          << " (another with --context KEY; a record names its context as context_key). The others:";
      for (const auto& c : contexts) {
        if (&c != chosen) err << "\n  " << describe(c);
      }
      err << "\n";
    }
  }
  const worklog::Session* latest = &chosen->latest();
  // The rates of the context's first session, as `kiln tune` uses them.
  const ContextRates context = context_rates(log, m, target.spec, latest->context_key, std::nullopt);

  EvaluationContext ctx;
  ctx.manifest = &m;
  ctx.log = &log;
  ctx.context_key = latest->context_key;
  ctx.key_version = key_version_from(latest->key_version);
  ctx.measure = false;
  std::vector<VariantOutcome> outcomes;
  for (std::size_t i = 0; i < m.variants.size(); ++i) outcomes.push_back(evaluate_variant(ctx, i));

  SelectionInput in{&m, &log, latest->context_key, target.spec.name, context.device, context.rates, latest->strategy};
  const Record record = choose_record(ctx, in, outcomes, 0, out);
  publish(m, record, {o.record_out, {}, o.header_out}, out, err);
  out << "kiln: " << m.kernel << ": record of " << record.device_name << " rebuilt from " << o.worklog.string() << " ("
      << record.counts.value("evaluated", 0) << " of " << m.variants.size() << " variants measured) -> "
      << o.record_out.string() << "\n";
}

}  // namespace kiln::tuner
