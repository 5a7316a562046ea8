/* Referent admin console: plain JavaScript, no dependencies, nothing fetched from elsewhere.
 *
 * The admin key lives in this tab's sessionStorage only and is sent, as a Bearer token,
 * only to this server's /v1/kbs/{kb}/admin API. Every value from the server is put on the
 * page as text (textContent), never as HTML. */
(function () {
  "use strict";

  const I18N = {
    zh: {
      skip: "跳到正文", title: "别名表管理控制台", langHint: "切换界面语言", signOut: "退出",
      signInTitle: "用管理员密钥登录", kb: "知识库", adminKey: "管理员密钥（admin key）",
      keyNote: "密钥只保存在本标签页（sessionStorage），只发给本服务器；关闭标签页或点“退出”即清除。",
      signIn: "登录", tabSearch: "实体与别名", tabConfusables: "易混淆实体", tabAnalytics: "反问分析",
      tabAudit: "审计日志", searchLabel: "按任意别名搜索（支持模糊匹配）", mode: "匹配方式",
      modeFuzzy: "模糊", modePrefix: "前缀", modeExact: "精确", search: "搜索", results: "结果",
      aliases: "别名", addAlias: "添加别名", add: "添加", saveShared: "仍然保存为共享别名",
      cancel: "取消", relations: "关系", confusableSiblings: "易混淆实体",
      markWith: "标记为易混淆（另一个实体的 id）", note: "说明", notePlaceholder: "说明（可选）",
      mark: "标记", actions: "操作",
      pairsHelp: "被标记为易混淆的实体对：模糊匹配不会落到已被精确提到的实体的易混淆兄弟上。",
      analyticsHelp: "哪些提及触发了反问、多频繁、用户选了哪个选项；某个选项占绝对多数时给出别名修改建议。",
      period: "时间范围", days7: "最近 7 天", days30: "最近 30 天", days90: "最近 90 天", daysAll: "全部",
      refresh: "刷新", colMention: "提及 / 别名", colCandidates: "候选实体", colAsked: "反问次数",
      colAnswers: "用户的回答", colSuggestion: "建议", recent: "最近的反问", colTime: "时间",
      colAnswer: "回答", action: "操作", target: "对象", filter: "筛选", colWho: "操作人",
      colChange: "变更", older: "更早的记录",
      signedIn: "已登录知识库 {kb}", kbSummary: "知识库 {kb} · 版本 {version} · {entities} 个实体 · {aliases} 个别名 · {types} 个类型",
      whoami: "知识库：{kb}", keyRejected: "密钥无效或已失效，请重新登录。", notAdmin: "这个密钥不是管理员密钥。",
      noKb: "知识库 {kb} 不存在。", failed: "请求失败：{detail}", noHits: "没有匹配“{q}”的实体。",
      hitMeta: "{id} · {type} · 匹配“{matched}” · {score} 分", shared: "多义",
      id: "ID", type: "类型", parent: "上级", children: "下级", description: "说明", none: "无",
      nameChip: "名称", removeAlias: "删除别名 {alias}", remove: "删除",
      aliasAdded: "已为 {name} 添加别名“{alias}”（审计 #{seq}）。",
      aliasShared: "已为 {name} 添加共享别名“{alias}”（审计 #{seq}），提到它时会反问。",
      aliasExists: "{name} 已有别名“{alias}”，未作修改。",
      aliasRemoved: "已从 {name} 删除别名“{alias}”（审计 #{seq}）。",
      conflict: "别名“{alias}”已经指向 {others}。如果仍然添加，只说“{alias}”的用户会被反问指的是哪一个。尚未保存任何内容。",
      notSaved: "未保存：别名“{alias}”没有添加。",
      relOut: "{type} → ", relIn: " → {type} → ", unmark: "取消标记", unmarkPair: "取消标记 {a} 与 {b}",
      marked: "已标记 {a} 与 {b} 为易混淆（审计 #{seq}）。", markedAlready: "{a} 与 {b} 已是易混淆实体。",
      unmarked: "已取消标记 {a} 与 {b}（审计 #{seq}）。", open: "打开 {name}",
      noPairs: "没有易混淆实体对。", noClarifications: "还没有记录到反问。",
      asked: "{n} 次", chosenN: "{name}：{n}", both: "都要：{n}", neither: "都不是：{n}",
      newQuestion: "换了问题：{n}", open_: "未回答：{n}",
      act_wait: "等待更多回答", act_keep: "保留歧义", act_point_alias: "修改别名指向",
      act_add_alias: "添加别名", act_review: "检查选项", act_done: "已解决",
      op_remove_alias: "从 {name} 删除别名“{alias}”", op_add_alias: "为 {name} 添加别名“{alias}”",
      kind_pronoun: "代词", kind_implicit: "省略", answer_chosen: "选择了 {names}",
      answer_both: "都要", answer_neither: "都不是", answer_new_question: "换了问题", answer_open: "未回答",
      takenFor: "近似匹配“{alias}”", openShort: "打开",
      noAudit: "没有审计记录。", loaded: "已加载 {n} 条。", auditLoaded: "已加载 {n} 条审计记录。",
      analyticsLoaded: "共 {n} 次反问。",
      results_n: "{n} 个结果。", signedOut: "已退出。",
      tabSuggest: "建议本体", suggestHelp: "从知识库已导入的文档中建议实体、别名和类型（只列出知识库还没有的）。逐条或批量接受、拒绝，改名，合并两条；先试导入检查，再一次性全部导入（全部成功或全部不变）。",
      suggestRun: "生成建议", selectAll: "全选", acceptSelected: "接受所选", rejectSelected: "拒绝所选",
      mergeSelected: "合并所选两条", select: "选择", colDecision: "决定", colName: "名称",
      colConfidence: "置信度", colEvidence: "证据", dryRun: "试导入（不写入）", importAccepted: "导入已接受的",
      accepted: "接受", rejected: "拒绝", selectRow: "选择 {name}", renameRow: "{name} 的名称",
      suggesting: "正在从已导入的文档生成建议……", suggested: "建议了 {n} 个实体（知识库已有的 {known} 个未列出）。",
      noSuggestions: "没有新的建议。", sharedAlias: "多义别名：几个已接受的实体共用，提到它时会反问", noOntologyYet: "知识库 {kb} 还没有本体：可以从已导入的文档生成建议。", decided: "{n} 条已标为“{decision}”。",
      renamed: "已把 {old} 改名为 {name}（原名保留为别名）。", mergeNeedsTwo: "请恰好选择两条再合并。",
      merged: "已把 {b} 合并进 {a}（别名合并）。", nothingAccepted: "没有已接受的实体。",
      dryOk: "试导入通过：将新增 {added} 个实体、修改 {changed} 个，写入 {types} 个类型、{relations} 条关系、{confusables} 对易混淆实体。尚未写入。",
      imported: "已导入：新增 {added} 个实体、修改 {changed} 个（版本 {version}）。",
      importError: "第 {line} 行（{what}），字段 {field}：{detail}", dryFirst: "内容改过了，请先再试导入一次。"
    },
    en: {
      skip: "Skip to content", title: "Alias table admin console", langHint: "Switch the interface language",
      signOut: "Sign out", signInTitle: "Sign in with an admin key", kb: "Knowledge base",
      adminKey: "Admin key",
      keyNote: "The key stays in this tab only (sessionStorage) and is sent only to this server; closing the tab or Sign out clears it.",
      signIn: "Sign in", tabSearch: "Entities & aliases", tabConfusables: "Confusable pairs",
      tabAnalytics: "Clarifications", tabAudit: "Audit log", searchLabel: "Search by any alias (fuzzy)",
      mode: "Match", modeFuzzy: "fuzzy", modePrefix: "prefix", modeExact: "exact", search: "Search",
      results: "Results", aliases: "Aliases", addAlias: "Add an alias", add: "Add",
      saveShared: "Save it as a shared alias anyway", cancel: "Cancel", relations: "Relations",
      confusableSiblings: "Confusable siblings", markWith: "Mark as confusable with (entity id)",
      note: "Note", notePlaceholder: "note (optional)", mark: "Mark", actions: "Actions",
      pairsHelp: "Pairs marked as confusable: a fuzzy match never lands on the confusable sibling of an entity the turn names exactly.",
      analyticsHelp: "Which mentions made Referent ask, how often, and which option users chose; where one answer dominates, an alias change is suggested.",
      period: "Period", days7: "last 7 days", days30: "last 30 days", days90: "last 90 days", daysAll: "all",
      refresh: "Refresh", colMention: "Mention / alias", colCandidates: "Candidates", colAsked: "Asked",
      colAnswers: "Answers", colSuggestion: "Suggestion", recent: "Latest clarifications", colTime: "Time",
      colAnswer: "Answer", action: "Action", target: "Target", filter: "Filter", colWho: "Who",
      colChange: "Change", older: "Older entries",
      signedIn: "Signed in to kb {kb}", kbSummary: "kb {kb} · version {version} · {entities} entities · {aliases} aliases · {types} types",
      whoami: "kb: {kb}", keyRejected: "The key is not valid (any more); sign in again.",
      notAdmin: "This key is not an admin key.", noKb: "Knowledge base {kb} does not exist.",
      failed: "Request failed: {detail}", noHits: "No entity matches “{q}”.",
      hitMeta: "{id} · {type} · matched “{matched}” · score {score}", shared: "shared",
      id: "ID", type: "Type", parent: "Parent", children: "Children", description: "Description", none: "none",
      nameChip: "name", removeAlias: "Remove alias {alias}", remove: "Remove",
      aliasAdded: "Alias “{alias}” added to {name} (audit #{seq}).",
      aliasShared: "Shared alias “{alias}” added to {name} (audit #{seq}); saying it alone now gets a question back.",
      aliasExists: "{name} already has the alias “{alias}”; nothing changed.",
      aliasRemoved: "Alias “{alias}” removed from {name} (audit #{seq}).",
      conflict: "The alias “{alias}” already names {others}. If you add it anyway, a user who says only “{alias}” is asked which one they mean. Nothing has been saved yet.",
      notSaved: "Not saved: the alias “{alias}” was not added.",
      relOut: "{type} → ", relIn: " → {type} → ", unmark: "Unmark", unmarkPair: "Unmark {a} and {b}",
      marked: "{a} and {b} marked as confusable (audit #{seq}).", markedAlready: "{a} and {b} are already confusable.",
      unmarked: "{a} and {b} unmarked (audit #{seq}).", open: "Open {name}",
      noPairs: "No confusable pairs.", noClarifications: "No clarification recorded yet.",
      asked: "{n}×", chosenN: "{name}: {n}", both: "both: {n}", neither: "neither: {n}",
      newQuestion: "asked something else: {n}", open_: "no answer: {n}",
      act_wait: "wait for answers", act_keep: "keep the ambiguity", act_point_alias: "point the alias",
      act_add_alias: "add an alias", act_review: "review the options", act_done: "settled",
      op_remove_alias: "remove the alias “{alias}” from {name}", op_add_alias: "add the alias “{alias}” to {name}",
      kind_pronoun: "pronoun", kind_implicit: "implicit", answer_chosen: "chose {names}",
      answer_both: "both", answer_neither: "neither", answer_new_question: "asked something else",
      answer_open: "no answer", takenFor: "taken for “{alias}”", openShort: "Open",
      noAudit: "No audit entries.", loaded: "{n} loaded.",
      auditLoaded: "{n} audit entries loaded.", analyticsLoaded: "{n} clarifications in all.",
      results_n: "{n} results.", signedOut: "Signed out.",
      tabSuggest: "Suggestions", suggestHelp: "Entities, aliases and types suggested from what the kb has ingested (only what the kb does not hold yet). Accept or reject one by one or in bulk, rename, merge two; check with a dry run, then import them all at once (all or nothing).",
      suggestRun: "Suggest", selectAll: "Select all", acceptSelected: "Accept selected", rejectSelected: "Reject selected",
      mergeSelected: "Merge the two selected", select: "Select", colDecision: "Decision", colName: "Name",
      colConfidence: "Confidence", colEvidence: "Evidence", dryRun: "Dry run (writes nothing)", importAccepted: "Import the accepted",
      accepted: "accept", rejected: "reject", selectRow: "Select {name}", renameRow: "Name of {name}",
      suggesting: "Suggesting from the ingested documents…", suggested: "{n} entities suggested ({known} the kb already holds are not listed).",
      noSuggestions: "Nothing new to suggest.", sharedAlias: "shared alias: several accepted entities have it, saying it alone gets a question back", noOntologyYet: "kb {kb} has no ontology yet: suggest one from its ingested documents.", decided: "{n} marked “{decision}”.",
      renamed: "{old} renamed {name} (the old name kept as an alias).", mergeNeedsTwo: "Select exactly two rows to merge.",
      merged: "{b} merged into {a} (aliases united).", nothingAccepted: "No entity is accepted.",
      dryOk: "Dry run passed: {added} entities would be added, {changed} changed, {types} types, {relations} relations, {confusables} confusable pairs written. Nothing written yet.",
      imported: "Imported: {added} entities added, {changed} changed (version {version}).",
      importError: "Line {line} ({what}), field {field}: {detail}", dryFirst: "The selection changed: run the dry run again first."
    }
  };

  const $ = (id) => document.getElementById(id);
  const session = window.sessionStorage;
  const state = {
    lang: localStorage.getItem("referent.console.lang") ||
          ((navigator.language || "").toLowerCase().startsWith("zh") ? "zh" : "en"),
    kb: session.getItem("referent.console.kb"), key: session.getItem("referent.console.key"),
    tab: "search", kbInfo: null, hits: null, query: "", entity: null, names: {},
    pendingAlias: null, analytics: null, audit: [], auditBefore: null, pairs: null
  };

  function t(key, params) {
    const table = I18N[state.lang] || I18N.en;
    let text = key in table ? table[key] : (I18N.en[key] || key);
    for (const [name, value] of Object.entries(params || {})) {
      text = text.split("{" + name + "}").join(String(value));
    }
    return text;
  }

  /* Build an element; children are nodes or strings (always inserted as text). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "onclick") node.addEventListener("click", value);
      else if (name === "text") node.textContent = value;
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  function say(message, bad) {
    const status = $("status");
    status.textContent = message;
    status.classList.toggle("bad", Boolean(bad));
  }

  class ApiError extends Error {
    constructor(status, data) {
      super((data && (data.detail || data.title)) || ("HTTP " + status));
      this.status = status; this.data = data;
    }
  }

  async function api(method, path, { body, query, text } = {}) {
    let url = "v1/kbs/" + encodeURIComponent(state.kb) + "/admin" + path;
    if (query) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== null && v !== undefined && v !== "") params.set(k, v);
      const text = params.toString();
      if (text) url += "?" + text;
    }
    const headers = { "Authorization": "Bearer " + state.key, "Accept": "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (text !== undefined) headers["Content-Type"] = "application/x-ndjson";
    const payload = text !== undefined ? text : body === undefined ? undefined : JSON.stringify(body);
    const resp = await fetch(url, { method, headers, credentials: "omit", cache: "no-store", body: payload });
    let data = null;
    try { data = await resp.json(); } catch (e) { data = null; }
    if (resp.status === 401 && state.key) {
      signOut();
      $("login-error").textContent = t("keyRejected");
      $("login-error").hidden = false;
    }
    if (!resp.ok) throw new ApiError(resp.status, data);
    return { status: resp.status, data };
  }

  function fail(error) {
    if (error instanceof ApiError && error.status === 401) return;
    say(t("failed", { detail: error.message }), true);
  }

  /* -- language --------------------------------------------------------------------- */

  function applyLanguage() {
    document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
    for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
    for (const node of document.querySelectorAll("[data-i18n-placeholder]")) {
      node.setAttribute("placeholder", t(node.dataset.i18nPlaceholder));
    }
    document.title = "Referent · " + t("title");
    $("lang").textContent = state.lang === "zh" ? "English" : "中文";
    $("lang").setAttribute("lang", state.lang === "zh" ? "en" : "zh-CN");
    renderAll();
  }

  function renderAll() {
    if (!state.key) return;
    renderSummary();
    if (state.hits) renderHits();
    if (state.entity) renderEntity();
    if (state.pendingAlias) renderWarning();
    if (state.pairs) renderPairs();
    if (state.analytics) renderAnalytics();
    renderAudit();
    if (state.suggest) renderSuggest();
  }

  /* -- sign in and out ---------------------------------------------------------------- */

  async function signIn(event) {
    event.preventDefault();
    const kb = $("login-kb").value.trim();
    const key = $("login-key").value.trim();
    const error = $("login-error");
    error.hidden = true;
    if (!/^[A-Za-z0-9_]{1,64}$/.test(kb) || !key) {
      error.textContent = t("failed", { detail: t("kb") + " / " + t("adminKey") });
      error.hidden = false;
      return;
    }
    state.kb = kb; state.key = key;
    try {
      state.kbInfo = await kbState();
      session.setItem("referent.console.kb", kb);
      session.setItem("referent.console.key", key);
      $("login-key").value = "";
      showApp();
      if (state.kbInfo.version) say(t("signedIn", { kb }));
    } catch (e) {
      state.key = null;
      const status = e instanceof ApiError ? e.status : 0;
      error.textContent = status === 401 ? t("keyRejected") : status === 403 ? t("notAdmin")
        : status === 404 ? t("noKb", { kb }) : t("failed", { detail: e.message });
      error.hidden = false;
      $("login-key").focus();
    }
  }

  function signOut() {
    session.removeItem("referent.console.key");
    session.removeItem("referent.console.kb");
    Object.assign(state, { key: null, kbInfo: null, hits: null, entity: null, pendingAlias: null,
                           analytics: null, audit: [], auditBefore: null, pairs: null, names: {},
                           suggest: null });
    $("app").hidden = true; $("login").hidden = false;
    $("signout").hidden = true; $("whoami").hidden = true;
    $("login-kb").value = state.kb || "demo";
    say("");
    $("login-key").focus();
  }

  /* The kb's figures; a kb with ingested documents but no ontology yet reads as empty
     (its first ontology comes from the suggestion screen). */
  async function kbState() {
    try {
      return (await api("GET", "")).data;
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
      return { kb: state.kb, version: 0, entities: 0, aliases: 0, types: 0 };
    }
  }

  function showApp() {
    $("login").hidden = true; $("app").hidden = false;
    $("signout").hidden = false; $("whoami").hidden = false;
    renderSummary();
    const empty = !state.kbInfo.version;
    selectTab(empty ? "suggest" : "search", false);
    if (empty) say(t("noOntologyYet", { kb: state.kb }));
    $(empty ? "suggest-run" : "search-q").focus();
  }

  function renderSummary() {
    if (!state.kbInfo) return;
    const i = state.kbInfo;
    $("kb-summary").textContent = t("kbSummary", { kb: i.kb, version: i.version, entities: i.entities,
                                                   aliases: i.aliases, types: i.types });
    $("whoami").textContent = t("whoami", { kb: state.kb });
  }

  async function refreshSummary() {
    try { state.kbInfo = (await api("GET", "")).data; renderSummary(); } catch (e) { fail(e); }
  }

  /* -- tabs ------------------------------------------------------------------------- */

  function selectTab(name, focus) {
    state.tab = name;
    for (const button of $("tabs").querySelectorAll("button")) {
      if (button.dataset.tab === name) button.setAttribute("aria-current", "page");
      else button.removeAttribute("aria-current");
    }
    for (const panel of ["search", "confusables", "analytics", "audit", "suggest"]) {
      $("panel-" + panel).hidden = panel !== name;
    }
    if (name === "confusables") loadPairs();
    if (name === "analytics") loadAnalytics();
    if (name === "audit") loadAudit(false);
    if (focus) {
      const first = { search: "search-q", confusables: "pairs-title", analytics: "analytics-days",
                      audit: "audit-action", suggest: "suggest-title" }[name];
      if ($(first)) $(first).focus();
    }
  }

  /* -- names of entities, for messages ---------------------------------------------------- */

  async function nameOf(id) {
    if (state.names[id]) return state.names[id];
    try {
      const { data } = await api("GET", "/entities/" + encodeURIComponent(id));
      state.names[id] = data.name;
    } catch (e) { state.names[id] = id; }
    return state.names[id];
  }

  function entityButton(id, label) {
    return el("button", { type: "button", class: "link", "aria-label": t("open", { name: label || id }),
                          onclick: () => openEntity(id, true) }, label || id);
  }

  /* -- search ---------------------------------------------------------------------- */

  async function search(event) {
    event.preventDefault();
    const q = $("search-q").value.trim();
    if (!q) return;
    $("results").setAttribute("aria-busy", "true");
    try {
      const { data } = await api("GET", "/search", { query: { q, mode: $("search-mode").value, limit: 20 } });
      state.hits = data.hits; state.query = q;
      for (const hit of data.hits) state.names[hit.id] = hit.name;
      renderHits();
      say(data.hits.length ? t("results_n", { n: data.hits.length }) : t("noHits", { q }));
    } catch (e) { fail(e); }
    $("results").removeAttribute("aria-busy");
  }

  function renderHits() {
    const list = clear($("results"));
    list.dataset.query = state.query;
    if (!state.hits.length) {
      list.appendChild(el("li", { class: "muted" }, t("noHits", { q: state.query })));
      return;
    }
    for (const hit of state.hits) {
      const current = state.entity && state.entity.id === hit.id;
      list.appendChild(el("li", {},
        el("button", { type: "button", "aria-pressed": current ? "true" : "false", "data-id": hit.id,
                       onclick: () => openEntity(hit.id, true) },
          el("span", { class: "hit-name" }, hit.name),
          hit.ambiguous ? el("span", { class: "badge shared" }, t("shared")) : el("span"),
          el("span", { class: "hit-meta" }, t("hitMeta", { id: hit.id, type: hit.type,
                                                          matched: hit.matched, score: hit.score })))));
    }
  }

  /* -- one entity ------------------------------------------------------------------- */

  async function openEntity(id, focus) {
    try {
      const { data } = await api("GET", "/entities/" + encodeURIComponent(id));
      state.entity = data; state.names[id] = data.name; state.pendingAlias = null;
      if (state.tab !== "search") selectTab("search", false);
      renderEntity();
      renderWarning();
      if (state.hits) renderHits();
      if (focus) $("entity-title").focus();
    } catch (e) { fail(e); }
  }

  function fact(term, ...value) {
    return [el("dt", {}, term), el("dd", {}, ...value)];
  }

  function renderEntity() {
    const e = state.entity;
    $("entity").hidden = false;
    $("entity-title").textContent = e.name;
    const none = () => el("span", { class: "muted" }, t("none"));
    const facts = clear($("entity-facts"));
    const rows = [
      fact(t("id"), el("code", {}, e.id)),
      fact(t("type"), e.type),
      fact(t("parent"), e.parent ? entityButton(e.parent, state.names[e.parent]) : none()),
      fact(t("children"), e.children.length ? e.children.flatMap((c, i) => [i ? ", " : "", entityButton(c, state.names[c])]) : none()),
      fact(t("description"), e.description || none())
    ];
    for (const row of rows) for (const node of row) facts.appendChild(node);

    const aliases = clear($("aliases"));
    aliases.appendChild(el("li", { class: "name" }, e.name, el("span", { class: "badge" }, t("nameChip"))));
    for (const alias of e.aliases) {
      aliases.appendChild(el("li", {}, alias,
        el("button", { type: "button", class: "small", "aria-label": t("removeAlias", { alias }),
                       onclick: () => removeAlias(alias) }, t("remove"))));
    }

    const relations = clear($("relations"));
    for (const r of e.relations.out) {
      relations.appendChild(el("li", {}, t("relOut", { type: r.type }), entityButton(r.to, state.names[r.to])));
    }
    for (const r of e.relations.in) {
      relations.appendChild(el("li", {}, entityButton(r.from, state.names[r.from]), t("relIn", { type: r.type }),
                               el("strong", {}, e.name)));
    }
    if (!relations.firstChild) relations.appendChild(el("li", { class: "muted" }, t("none")));

    const confusables = clear($("confusables"));
    for (const c of e.confusables) {
      confusables.appendChild(el("li", {}, entityButton(c.with, state.names[c.with]),
        c.note ? el("span", { class: "muted" }, " — " + c.note) : null, " ",
        el("button", { type: "button", class: "small", "aria-label": t("unmarkPair", { a: e.id, b: c.with }),
                       onclick: () => unmark(e.id, c.with) }, t("unmark"))));
    }
    if (!confusables.firstChild) confusables.appendChild(el("li", { class: "muted" }, t("none")));
    fetchNames(e);
  }

  /* Names of the entities this one refers to, fetched once, then shown instead of ids. */
  async function fetchNames(e) {
    const ids = [e.parent, ...e.children, ...e.relations.out.map((r) => r.to),
                 ...e.relations.in.map((r) => r.from), ...e.confusables.map((c) => c.with)];
    const missing = [...new Set(ids.filter((id) => id && !state.names[id]))].slice(0, 30);
    if (!missing.length) return;
    await Promise.all(missing.map(nameOf));
    if (state.entity === e) renderEntity();
  }

  async function addAlias(event) {
    event.preventDefault();
    const alias = $("alias-input").value.trim();
    if (!alias || !state.entity) return;
    await saveAlias(alias, false);
  }

  async function saveAlias(alias, ambiguous) {
    const e = state.entity;
    try {
      const { status, data } = await api("POST", "/entities/" + encodeURIComponent(e.id) + "/aliases",
                                         { body: { alias, ambiguous } });
      state.pendingAlias = null;
      renderWarning();
      $("alias-input").value = "";
      await openEntity(e.id, false);
      say(status === 201 ? t(ambiguous ? "aliasShared" : "aliasAdded", { alias, name: e.name, seq: data.audit_seq })
                         : t("aliasExists", { alias, name: e.name }));
      $("alias-input").focus();
      refreshSummary();
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.data && err.data.conflicting) {
        const others = err.data.conflicting;
        await Promise.all(others.map(nameOf));
        state.pendingAlias = { alias, others };
        renderWarning();
        $("alias-warning").focus();
      } else {
        fail(err);
      }
    }
  }

  function renderWarning() {
    const box = $("alias-warning");
    const pending = state.pendingAlias;
    box.hidden = !pending;
    if (!pending) return;
    const sep = state.lang === "zh" ? "、" : ", ";
    const others = pending.others.map((id) => (state.names[id] || id) + " (" + id + ")").join(sep);
    $("alias-warning-text").textContent = t("conflict", { alias: pending.alias, others });
  }

  function cancelAlias() {
    const pending = state.pendingAlias;
    state.pendingAlias = null;
    renderWarning();
    if (pending) say(t("notSaved", { alias: pending.alias }));
    $("alias-input").focus();
  }

  async function removeAlias(alias) {
    const e = state.entity;
    try {
      const { data } = await api("DELETE", "/entities/" + encodeURIComponent(e.id) + "/aliases", { query: { alias } });
      await openEntity(e.id, false);
      say(t("aliasRemoved", { alias, name: e.name, seq: data.audit_seq }));
      $("alias-input").focus();
      refreshSummary();
    } catch (err) { fail(err); }
  }

  async function mark(event) {
    event.preventDefault();
    const other = $("confusable-with").value.trim();
    if (!other || !state.entity) return;
    const a = state.entity.id;
    try {
      const { status, data } = await api("POST", "/confusables", { body: { a, b: other, note: $("confusable-note").value.trim() } });
      $("confusable-with").value = ""; $("confusable-note").value = "";
      await openEntity(a, false);
      say(status === 201 ? t("marked", { a, b: other, seq: data.audit_seq }) : t("markedAlready", { a, b: other }));
      $("confusable-with").focus();
    } catch (err) { fail(err); }
  }

  async function unmark(a, b) {
    try {
      const { data } = await api("DELETE", "/confusables", { query: { a, b } });
      say(t("unmarked", { a, b, seq: data.audit_seq }));
      if (state.entity && (state.entity.id === a || state.entity.id === b)) await openEntity(state.entity.id, false);
      if (state.tab === "confusables") await loadPairs();
      $("confusable-with").focus();
    } catch (err) { fail(err); }
  }

  /* -- confusable pairs ------------------------------------------------------------- */

  async function loadPairs() {
    try {
      state.pairs = (await api("GET", "/confusables")).data.pairs;
      renderPairs();
    } catch (e) { fail(e); }
  }

  function renderPairs() {
    const body = clear($("pairs"));
    if (!state.pairs.length) {
      body.appendChild(el("tr", {}, el("td", { colspan: "4", class: "muted" }, t("noPairs"))));
      return;
    }
    for (const p of state.pairs) {
      body.appendChild(el("tr", {},
        el("td", {}, entityButton(p.a)), el("td", {}, entityButton(p.b)), el("td", {}, p.note || ""),
        el("td", {}, el("button", { type: "button", class: "small", "aria-label": t("unmarkPair", { a: p.a, b: p.b }),
                                    onclick: () => unmark(p.a, p.b) }, t("unmark")))));
    }
  }

  /* -- clarification analytics --------------------------------------------------------- */

  async function loadAnalytics(event) {
    if (event) event.preventDefault();
    try {
      const { data } = await api("GET", "/clarifications", { query: { days: $("analytics-days").value, recent: 20 } });
      state.analytics = data;
      for (const g of data.groups) for (const c of g.candidates) state.names[c.id] = c.name;
      renderAnalytics();
      say(t("analyticsLoaded", { n: data.asked }));
    } catch (e) { fail(e); }
  }

  function mentionCell(g) {
    const cell = el("td", {}, el("strong", {}, g.mentions.join(" / ") || "—"));
    // A fuzzy mention: show the shared alias it was taken for.
    if (g.alias && g.matches.indexOf("fuzzy") >= 0) cell.appendChild(el("div", { class: "muted" }, t("takenFor", { alias: g.alias })));
    if (g.kind !== "alias") cell.appendChild(el("div", {}, el("span", { class: "badge" }, t("kind_" + g.kind))));
    return cell;
  }

  function renderAnalytics() {
    const data = state.analytics;
    const body = clear($("analytics-rows"));
    if (!data.groups.length) {
      body.appendChild(el("tr", {}, el("td", { colspan: "5", class: "muted" }, t("noClarifications"))));
    }
    for (const g of data.groups) {
      const answered = g.suggestion.answered || 1;
      const counts = el("ul", { class: "counts" });
      for (const [id, n] of Object.entries(g.chosen)) {
        counts.appendChild(el("li", {}, t("chosenN", { name: state.names[id] || id, n }),
          el("span", { class: "bar", "aria-hidden": "true", "data-width": String(n) })));
      }
      for (const [kind, key] of [["both", "both"], ["neither", "neither"], ["new_question", "newQuestion"], ["open", "open_"]]) {
        if (g.answers[kind]) counts.appendChild(el("li", { class: "muted" }, t(key, { n: g.answers[kind] })));
      }
      // Bar widths through the CSSOM (the page's policy forbids inline style attributes).
      for (const bar of counts.querySelectorAll(".bar")) bar.style.width = Math.max(4, 80 * Number(bar.dataset.width) / answered) + "px";
      const s = g.suggestion;
      const changes = el("ul", { class: "changes" });
      for (const c of s.changes || []) {
        const name = state.names[c.entity] || c.entity;
        changes.appendChild(el("li", {}, t("op_" + c.op, { alias: c.alias, name }), " ",
          el("button", { type: "button", class: "small", "aria-label": t("open", { name }),
                         onclick: () => openEntity(c.entity, true) }, t("openShort"))));
      }
      body.appendChild(el("tr", { "data-alias": g.alias || "" },
        mentionCell(g),
        el("td", {}, el("ul", { class: "plain" }, g.candidates.map((c) => el("li", {}, entityButton(c.id, c.name), " ", el("code", {}, c.id))))),
        el("td", {}, t("asked", { n: g.asked })),
        el("td", {}, counts),
        el("td", { class: "suggestion" }, el("span", { class: "badge act-" + s.action }, t("act_" + s.action)),
          el("p", { class: "reason" }, s.reason[state.lang] || s.reason.en),
          changes.firstChild ? changes : null)));
    }
    const recent = clear($("recent-rows"));
    for (const r of data.recent) {
      const names = r.chosen.map((id) => state.names[id] || id).join(state.lang === "zh" ? "、" : ", ");
      recent.appendChild(el("tr", {},
        el("td", {}, formatTime(r.asked_at)),
        el("td", {}, r.mention + (r.alias && r.match === "fuzzy" ? " (" + t("takenFor", { alias: r.alias }) + ")" : "")),
        el("td", {}, r.candidates.join(", ")),
        el("td", {}, t("answer_" + r.answer, { names }))));
    }
  }

  function formatTime(iso) {
    if (!iso) return "";
    const date = new Date(iso);
    if (isNaN(date.getTime())) return iso;
    return date.toLocaleString(state.lang === "zh" ? "zh-CN" : "en-GB", { hour12: false });
  }

  /* -- audit log ------------------------------------------------------------------- */

  async function loadAudit(more, event) {
    if (event) event.preventDefault();
    try {
      const query = { action: $("audit-action").value.trim(), target: $("audit-target").value.trim(), limit: 50,
                      before_seq: more ? state.auditBefore : null };
      const { data } = await api("GET", "/audit", { query });
      state.audit = more ? state.audit.concat(data.entries) : data.entries;
      state.auditBefore = data.next_before_seq;
      renderAudit();
      say(t("auditLoaded", { n: state.audit.length }));
    } catch (e) { fail(e); }
  }

  function describe(before, after) {
    if (before && after && typeof before === "object" && typeof after === "object") {
      const parts = [];
      for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
        const a = before[key], b = after[key];
        if (JSON.stringify(a) === JSON.stringify(b)) continue;
        if (Array.isArray(a) && Array.isArray(b)) {
          const added = b.filter((x) => !a.includes(x)).map((x) => "+" + JSON.stringify(x));
          const removed = a.filter((x) => !b.includes(x)).map((x) => "−" + JSON.stringify(x));
          parts.push(key + ": " + added.concat(removed).join(" "));
        } else {
          parts.push(key + ": " + JSON.stringify(a) + " → " + JSON.stringify(b));
        }
      }
      return parts.join("\n");
    }
    const value = after !== null && after !== undefined ? after : before;
    const text = JSON.stringify(value);
    return (after === null || after === undefined ? "− " : "+ ") + (text.length > 240 ? text.slice(0, 240) + "…" : text);
  }

  function renderAudit() {
    const body = clear($("audit-rows"));
    if (!state.audit.length) {
      body.appendChild(el("tr", {}, el("td", { colspan: "6", class: "muted" }, t("noAudit"))));
    }
    for (const entry of state.audit) {
      body.appendChild(el("tr", { "data-seq": String(entry.seq) },
        el("td", {}, String(entry.seq)), el("td", {}, formatTime(entry.at)), el("td", {}, entry.who),
        el("td", {}, el("code", {}, entry.action)), el("td", {}, entry.target || ""),
        el("td", {}, el("code", {}, describe(entry.before, entry.after)))));
    }
    $("audit-more").hidden = !state.auditBefore;
  }

  /* -- ontology suggestion: review, then import ---------------------------------------- */
  /* state.suggest: { rows: [{id, line, evidence, accepted, selected, merged}], others: [lines],
     known, checked: the file the last passing dry run checked }. A rejected or merged-away
     entity takes the relations and confusable pairs that name it with it. */

  async function runSuggest() {
    say(t("suggesting"));
    $("suggest-run").disabled = true;
    try {
      const { data } = await api("POST", "/suggest");
      const evidence = {};
      for (const e of data.evidence) if (e.kind === "entity") evidence[e.id] = e;
      const lines = data.ontology.split("\n").filter((x) => x.trim()).map((x) => JSON.parse(x));
      state.suggest = { known: data.known.length, checked: null,
        rows: lines.filter((l) => l.kind === "entity")
                   .map((l) => ({ id: l.id, line: l, evidence: evidence[l.id] || {}, accepted: true, selected: false })),
        others: lines.filter((l) => l.kind !== "entity") };
      state.suggest.rows.sort((a, b) => (b.evidence.confidence || 0) - (a.evidence.confidence || 0));
      renderSuggest();
      say(state.suggest.rows.length ? t("suggested", { n: state.suggest.rows.length, known: data.known.length })
                                    : t("noSuggestions"));
    } catch (e) { fail(e); } finally { $("suggest-run").disabled = false; }
  }

  function liveRows() { return state.suggest ? state.suggest.rows.filter((r) => !r.merged) : []; }

  function selectedRows() { return liveRows().filter((r) => r.selected); }

  function changed() { state.suggest.checked = null; renderSuggest(); }

  function decide(accepted) {
    const rows = selectedRows();
    for (const r of rows) { r.accepted = accepted; r.selected = false; }
    changed();
    say(t("decided", { n: rows.length, decision: t(accepted ? "accepted" : "rejected") }));
  }

  function rename(row, value) {
    const name = value.trim();
    const old = row.line.name;
    if (!name || name === old) return;
    const aliases = new Set(row.line.aliases);
    aliases.delete(name);
    aliases.add(old);
    row.line = Object.assign({}, row.line, { name, aliases: Array.from(aliases).sort() });
    changed();
    say(t("renamed", { old, name }));
  }

  function merge() {
    const rows = selectedRows();
    if (rows.length !== 2) { say(t("mergeNeedsTwo"), true); return; }
    const [keep, gone] = rows;  // rows are in confidence order: the surer one stays
    const aliases = new Set([...keep.line.aliases, ...gone.line.aliases, gone.line.name]);
    aliases.delete(keep.line.name);
    keep.line = Object.assign({}, keep.line, { aliases: Array.from(aliases).sort() });
    keep.mergedFrom = (keep.mergedFrom || []).concat(gone.id, gone.mergedFrom || []);
    gone.merged = keep.id; keep.selected = false; gone.selected = false;
    changed();
    say(t("merged", { a: keep.line.name, b: gone.line.name }));
  }

  /* The file to import: the accepted entities, their types, and the relations and pairs
     between accepted entities (a merged-away id read as the one it was merged into). */
  function acceptedFile() {
    const into = {};
    for (const r of state.suggest.rows) into[r.id] = r.merged || r.id;
    const kept = new Set(liveRows().filter((r) => r.accepted).map((r) => r.id));
    const lines = liveRows().filter((r) => r.accepted).map((r) => {
      const parent = r.line.parent && into[r.line.parent];
      return Object.assign({}, r.line, { parent: parent && kept.has(parent) && parent !== r.id ? parent : null });
    });
    const types = new Set(lines.map((l) => l.type));
    const seen = new Set();
    for (const l of state.suggest.others) {
      let line = l;
      if (l.kind === "type" && !types.has(l.name)) continue;
      if (l.kind === "relation") line = Object.assign({}, l, { from: into[l.from] || l.from, to: into[l.to] || l.to });
      if (l.kind === "confusable") line = Object.assign({}, l, { a: into[l.a] || l.a, b: into[l.b] || l.b });
      const ends = l.kind === "relation" ? [line.from, line.to] : l.kind === "confusable" ? [line.a, line.b] : [];
      if (ends.some((id) => !kept.has(id)) || (ends.length && ends[0] === ends[1])) continue;
      const key = JSON.stringify(line);
      if (!seen.has(key)) { seen.add(key); lines.push(line); }
    }
    // Types first, as the import format reads them.
    lines.sort((a, b) => (a.kind === "type" ? 0 : 1) - (b.kind === "type" ? 0 : 1));
    return lines;
  }

  async function sendImport(dry) {
    const lines = acceptedFile();
    if (!lines.some((l) => l.kind === "entity")) { say(t("nothingAccepted"), true); return; }
    const text = lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
    if (!dry && state.suggest.checked !== text) { say(t("dryFirst"), true); return; }
    const box = $("suggest-errors");
    box.hidden = true;
    try {
      const { data } = await api("POST", "/import", { text, query: { dry_run: dry ? "true" : "false" } });
      const figures = { added: data.entities_added, changed: data.entities_changed, types: data.types_written,
                        relations: data.relations, confusables: data.confusables, version: data.version };
      $("suggest-report").textContent = t(dry ? "dryOk" : "imported", figures);
      say(t(dry ? "dryOk" : "imported", figures));
      state.suggest.checked = dry ? text : null;
      if (!dry) { state.suggest = null; clear($("suggest-rows")); refreshSummary(); }
      $("suggest-import").disabled = !(state.suggest && state.suggest.checked);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 422) { fail(err); return; }
      showImportError(err.data || {}, lines);
    }
  }

  function showImportError(data, lines) {
    const line = lines[(data.line || 0) - 1];
    const what = line ? (line.name || line.kind + " " + (line.from || line.a || "")) : "—";
    const box = clear($("suggest-errors"));
    box.appendChild(el("p", { class: "error" }, t("importError", { line: data.line || "—", what,
                                                                   field: data.field || "—", detail: data.detail || "" })));
    box.hidden = false;
    box.focus();
    $("suggest-report").textContent = "";
    say(t("failed", { detail: data.detail || "" }), true);
  }

  function evidenceCell(ev) {
    const cell = el("td", { class: "evidence" }, el("div", {}, ev.reason || ""));
    for (const p of (ev.passages || []).slice(0, 2)) {
      cell.appendChild(el("blockquote", {}, el("code", {}, p.passage_id || ""), " ", p.snippet || ""));
    }
    return cell;
  }

  function suggestRow(r, shared) {
    const name = r.line.name;
    const pick = el("input", { type: "checkbox", "aria-label": t("selectRow", { name }) });
    pick.checked = r.selected;
    pick.addEventListener("change", () => { r.selected = pick.checked; renderSelectAll(); });
    const decision = el("select", { "aria-label": t("colDecision") + " " + name, class: "decision" },
      el("option", { value: "accept" }, t("accepted")), el("option", { value: "reject" }, t("rejected")));
    decision.value = r.accepted ? "accept" : "reject";
    decision.addEventListener("change", () => { r.accepted = decision.value === "accept"; changed(); });
    const field = el("input", { value: name, maxlength: "128", "aria-label": t("renameRow", { name }), class: "rename" });
    field.addEventListener("change", () => rename(r, field.value));
    return el("tr", { "data-id": r.id, class: r.accepted ? "accepted" : "rejected" },
      el("td", {}, pick), el("td", {}, decision), el("td", {}, field, el("div", {}, el("code", {}, r.id))),
      el("td", {}, el("ul", { class: "chips" }, r.line.aliases.map((a) => (shared[a] || 0) > 1
        ? el("li", { class: "name shared", title: t("sharedAlias") }, a) : el("li", { class: "name" }, a)))),
      el("td", {}, r.line.type),
      el("td", {}, (r.evidence.confidence === undefined ? "—" : r.evidence.confidence.toFixed(2))),
      evidenceCell(r.evidence));
  }

  function renderSelectAll() {
    const rows = liveRows();
    $("suggest-all").checked = rows.length > 0 && rows.every((r) => r.selected);
  }

  function renderSuggest() {
    const body = clear($("suggest-rows"));
    if (!state.suggest) return;
    // An alias two accepted entities share is ambiguous: saying it alone gets a question back.
    const shared = {};
    for (const r of liveRows()) if (r.accepted) for (const a of new Set([r.line.name, ...r.line.aliases])) shared[a] = (shared[a] || 0) + 1;
    for (const r of liveRows()) body.appendChild(suggestRow(r, shared));
    renderSelectAll();
    $("suggest-import").disabled = !state.suggest.checked;
  }

  function wireSuggest() {
    $("suggest-run").addEventListener("click", runSuggest);
    $("suggest-all").addEventListener("change", () => {
      for (const r of liveRows()) r.selected = $("suggest-all").checked;
      renderSuggest();
    });
    $("suggest-accept").addEventListener("click", () => decide(true));
    $("suggest-reject").addEventListener("click", () => decide(false));
    $("suggest-merge").addEventListener("click", merge);
    $("suggest-dry").addEventListener("click", () => sendImport(true));
    $("suggest-import").addEventListener("click", () => sendImport(false));
  }

  /* -- wiring ------------------------------------------------------------------------ */

  document.addEventListener("DOMContentLoaded", () => {
    $("login-form").addEventListener("submit", signIn);
    $("signout").addEventListener("click", () => { signOut(); say(t("signedOut")); });
    $("lang").addEventListener("click", () => {
      state.lang = state.lang === "zh" ? "en" : "zh";
      localStorage.setItem("referent.console.lang", state.lang);
      applyLanguage();
    });
    for (const button of $("tabs").querySelectorAll("button")) {
      button.addEventListener("click", () => selectTab(button.dataset.tab, true));
    }
    $("search-form").addEventListener("submit", search);
    $("alias-form").addEventListener("submit", addAlias);
    $("alias-confirm").addEventListener("click", () => state.pendingAlias && saveAlias(state.pendingAlias.alias, true));
    $("alias-cancel").addEventListener("click", cancelAlias);
    $("alias-warning").addEventListener("keydown", (event) => { if (event.key === "Escape") cancelAlias(); });
    $("confusable-form").addEventListener("submit", mark);
    $("analytics-form").addEventListener("submit", loadAnalytics);
    $("audit-form").addEventListener("submit", (event) => loadAudit(false, event));
    $("audit-more").addEventListener("click", () => loadAudit(true));
    wireSuggest();
    applyLanguage();
    if (state.key && state.kb) {
      $("login").hidden = true;  // signed in earlier in this tab: no login form flash
      kbState().then((info) => { state.kbInfo = info; showApp(); })
                    .catch((e) => { if (!(e instanceof ApiError && e.status === 401)) { signOut(); fail(e); } });
    } else {
      $("login-kb").value = state.kb || "demo";
      $("login-key").focus();
    }
  });
})();
