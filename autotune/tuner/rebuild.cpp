#include "rebuild.hpp"

#include <algorithm>
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
  const Context* chosen = &contexts.back();
  if (o.context) {
    auto it = std::find_if(contexts.begin(), contexts.end(), [&](const Context& c) { return c.key == *o.context; });
    if (it == contexts.end()) {
      std::string known;
      for (const auto& c : contexts) known += "\n  " + describe(c);
      throw Error("--context " + *o.context + ": " + o.worklog.string() + " has no tuning of " + m.kernel + " on " +
                  target.spec.name + " in that context; its contexts, oldest first:" + known);
    }
    chosen = &*it;
  } else if (contexts.size() > 1) {
    // The newest context is not always the checkout's: a tuning of changed sources that was not
    // taken leaves its context behind. Say which one was used, and which others there are.
    err << "kiln record: " << o.worklog.string() << " holds " << contexts.size() << " tuning contexts of " << m.kernel
        << " on " << target.spec.name << "; using the newest, " << describe(*chosen)
        << " (another with --context KEY; a record names its context as context_key). The others:";
    for (std::size_t i = 0; i + 1 < contexts.size(); ++i) err << "\n  " << describe(contexts[i]);
    err << "\n";
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
