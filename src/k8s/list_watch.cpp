#include "k8s/list_watch.hpp"

#include <chrono>
#include <thread>

#include "k8s/http_client.hpp"

namespace c2c::k8s {

using nlohmann::json;

std::string object_resource_version(const json& obj) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) return {};
  auto it = obj["metadata"].find("resourceVersion");
  return it != obj["metadata"].end() && it->is_string() ? it->get<std::string>() : std::string();
}

namespace {

void sleep_unless_stopped(const std::atomic<bool>& stop, int ms) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void bump(std::atomic<int>* c) {
  if (c) ++*c;
}

}  // namespace

void list_watch(const KubeConfig& cfg, const ListWatchTarget& target, const ListWatchTiming& timing,
                ListWatchHandler& handler, const ListWatchCounters& counters, const std::atomic<bool>& stop) {
  HttpClient http(cfg);
  const std::string& name = target.name;
  while (!stop) {
    // LIST (paginated): the resourceVersion of the list is where the watch starts.
    std::vector<json> items;
    std::string rv, cont;
    bool listed = true;
    do {
      std::string q = target.path + "?limit=" + std::to_string(timing.list_page_size) + target.extra_query +
                      (cont.empty() ? "" : "&continue=" + url_encode(cont));
      bump(counters.lists);
      HttpResult res = http.get(q, 60, &stop);
      json page = res.ok() ? json::parse(res.body, nullptr, false) : json();
      if (!res.ok() || page.is_discarded() || !page.is_object()) {
        handler.on_notice("error", "list " + name + ": " + (res.ok() ? "not a JSON object" : describe_failure(res)));
        listed = false;
        break;
      }
      if (page.contains("items") && page["items"].is_array())
        for (auto& it : page["items"]) items.push_back(std::move(it));
      const json& md = page.contains("metadata") && page["metadata"].is_object() ? page["metadata"] : json::object();
      rv = md.value("resourceVersion", "");
      cont = md.value("continue", "");
    } while (!cont.empty() && !stop);
    if (!listed) {
      sleep_unless_stopped(stop, timing.retry_backoff_ms);
      continue;
    }
    if (stop) break;
    handler.on_list(std::move(items), rv, "list " + name);

    // WATCH from rv until 410 Gone or a broken connection; a clean end just re-watches.
    while (!stop) {
      bool gone = false;
      int lines = 0;
      auto started = std::chrono::steady_clock::now();
      std::string q = target.path + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + url_encode(rv) +
                      "&timeoutSeconds=" + std::to_string(timing.watch_timeout_s) + target.extra_query;
      bump(counters.watches);
      HttpResult res = http.stream(
          q,
          [&](const std::string& line) {
            ++lines;
            json ev = json::parse(line, nullptr, false);
            if (ev.is_discarded() || !ev.is_object() || !ev.contains("type") || !ev["type"].is_string()) {
              handler.on_notice("error", "watch " + name + ": not a watch event: " + line.substr(0, 200));
              return true;
            }
            std::string type = ev["type"];
            const json& obj = ev.contains("object") ? ev["object"] : json();
            if (type == "ERROR") {
              long code = obj.is_object() ? obj.value("code", 0L) : 0L;
              if (code == 410) gone = true;
              else handler.on_notice("error", "watch " + name + ": " + obj.dump());
              return false;
            }
            std::string obj_rv = object_resource_version(obj);
            if (type != "BOOKMARK" && !handler.on_event(type, obj, "watch " + name))
              handler.on_notice("error", "watch " + name + ": unknown event type " + type);
            if (!obj_rv.empty()) rv = obj_rv;
            return true;
          },
          stop, timing.watch_timeout_s + 30);
      if (stop) break;
      if (gone || res.status == 410) {
        bump(counters.relists_after_gone);
        handler.on_notice("relist", name + ": 410 Gone (resourceVersion " + rv + " expired)");
        break;
      }
      if (!res.error.empty() || (res.status != 200 && res.status != 0)) {
        bump(counters.relists_after_break);
        handler.on_notice("relist", name + ": watch broke: " +
                                        (res.error.empty() ? "HTTP " + std::to_string(res.status) : res.error));
        sleep_unless_stopped(stop, timing.retry_backoff_ms);
        break;
      }
      // A server that ends watches at once must not make this a busy loop.
      if (lines == 0 && std::chrono::steady_clock::now() - started < std::chrono::seconds(1))
        sleep_unless_stopped(stop, timing.retry_backoff_ms);
    }
  }
}

}  // namespace c2c::k8s
