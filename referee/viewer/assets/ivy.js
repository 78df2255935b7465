// Ivy's board view: the house as an SVG drawing, rows 12 (the top) down to 1 (the soil),
// with what the shown turn did marked on it. Every cell is a <g data-cell="d2"
// data-state="G"> whose state is its §6 character, as the referee computed it.

VIEWS.ivy = {
  create(container, document_) {
    const frames = document_.frames;
    const layout = document_.layout;
    const seatsInfo = document_.seats;
    const SIZE = 40;
    const MARGIN = 44;
    const columns = layout.columns.length;
    const width = MARGIN * 2 + columns * SIZE;
    const height = MARGIN * 2 + 12 * SIZE;
    const glass = new Set(layout.glass);
    const roots = new Set(layout.roots);
    const x = (column) => MARGIN + column * SIZE;
    const y = (row) => MARGIN + (12 - row) * SIZE;
    const INK = {
      creep: "#b34700",
      leaf: "#b34700",
      choke: "#c62828",
      grafted: "#0b57d0",
      withered: "#111111",
      shed: "#555555",
      cleared: "#6d4c41",
    };
    const WORDS = {
      ".": "empty", "#": "glass", g: "Green vine", G: "Green vine with a leaf",
      p: "Purple vine", P: "Purple vine with a leaf", w: "withering vine",
      W: "withering vine with a leaf", 1: "deadwood, marker 1", 2: "deadwood, marker 2",
    };
    const VINE = { g: ["#2e7d32", "#a5d6a7", "#1b5e20"], p: ["#7b1fa2", "#e1bee7", "#4a148c"],
      w: ["#8a8a8a", "#e0d6cf", "#4e342e"] };

    const summaryId = "board-summary";
    const drawing = svg("svg", {
      viewBox: "0 0 " + width + " " + height,
      role: "img",
      "aria-labelledby": summaryId,
      "data-board": "ivy",
    });
    const summary = el("p", { id: summaryId, class: "visually-hidden" });
    container.append(drawing, summary);

    // The house: walls and roof around the cells, the soil, column letters, row numbers.
    const outline = [];
    for (let row = 1; row <= 12; row += 1) {
      const left = x(layout.rows[row][0]);
      outline.push(left + "," + (y(row) + SIZE), left + "," + y(row));
    }
    for (let row = 12; row >= 1; row -= 1) {
      const right = x(layout.rows[row][1] + 1);
      outline.push(right + "," + y(row), right + "," + (y(row) + SIZE));
    }
    drawing.append(svg("polygon", { points: outline.join(" "), fill: "#f3ede0", stroke: "#5d4a36",
      "stroke-width": 4, "stroke-linejoin": "round" }));
    drawing.append(svg("rect", { x: x(0), y: y(1), width: columns * SIZE, height: SIZE,
      fill: "#dccbb0" }));
    for (let column = 0; column < columns; column += 1) {
      const letter = layout.columns[column];
      drawing.append(svg("text", { x: x(column) + SIZE / 2, y: MARGIN - 14, "text-anchor": "middle",
        "font-size": 15, fill: "#1b1b1b", "aria-hidden": "true" }, letter));
      drawing.append(svg("text", { x: x(column) + SIZE / 2, y: height - MARGIN + 26, "text-anchor": "middle",
        "font-size": 15, fill: "#1b1b1b", "aria-hidden": "true" }, letter));
    }
    for (let row = 1; row <= 12; row += 1) {
      for (const [at, anchor] of [[MARGIN - 22, "end"], [width - MARGIN + 22, "start"]]) {
        drawing.append(svg("text", { x: at, y: y(row) + SIZE / 2 + 5, "text-anchor": anchor,
          "font-size": 14, fill: "#1b1b1b", "aria-hidden": "true" }, String(row)));
      }
    }
    // The tunnel joins a5 and i5: an arrow out of each side wall.
    for (const [from, to] of [[x(0) - 2, x(0) - 16], [x(columns) + 2, x(columns) + 16]]) {
      drawing.append(svg("path", {
        d: "M" + from + " " + (y(5) + SIZE / 2) + " H" + to,
        stroke: "#5d4a36", "stroke-width": 3, "stroke-dasharray": "3 2",
      }, svg("title", {}, "The tunnel: a5 and i5 are neighbours")));
    }

    const cellNodes = new Map();
    const cellsLayer = svg("g", {});
    const marksLayer = svg("g", { "pointer-events": "none" });
    drawing.append(cellsLayer, marksLayer);
    for (const [name, column, row] of layout.cells) {
      const node = svg("g", { "data-cell": name, transform: "translate(" + x(column) + "," + y(row) + ")" });
      cellsLayer.append(node);
      cellNodes.set(name, node);
    }

    function leafShape(fill, stroke) {
      return svg("path", {
        d: "M9 31 C9 17 18 9 31 9 C31 23 23 31 9 31 Z M9 31 L22 18",
        fill, stroke, "stroke-width": 2, "stroke-linejoin": "round",
      });
    }

    function drawCell(node, name, char, lit, index) {
      node.replaceChildren();
      node.setAttribute("data-state", char);
      node.setAttribute("data-lit", lit ? "1" : "0");
      node.removeAttribute("data-change");
      const inset = { x: 1, y: 1, width: SIZE - 2, height: SIZE - 2 };
      let words = WORDS[char];
      if (char === "#") {
        node.append(svg("rect", { ...inset, fill: "#d9eef7", stroke: "#5c9ab5", "stroke-width": 1.5 }),
          svg("path", { d: "M8 20 L20 8 M16 32 L32 16", stroke: "#ffffff", "stroke-width": 3 }));
      } else if (char === "1" || char === "2") {
        node.append(svg("rect", { ...inset, fill: "#5d4037" }),
          svg("path", { d: "M6 10 L34 30 M6 30 L34 10", stroke: "#8d6e63", "stroke-width": 3 }),
          svg("text", { x: SIZE / 2, y: SIZE / 2 + 6, "text-anchor": "middle", "font-size": 17,
            "font-weight": 700, fill: "#ffffff" }, char));
      } else if (char === ".") {
        node.append(svg("rect", { ...inset, fill: "transparent", stroke: "#d3c7b1", "stroke-width": 1 }));
      } else {
        const [fill, leafFill, dark] = VINE[char.toLowerCase()];
        node.append(svg("rect", { ...inset, rx: 6, fill }));
        if (roots.has(name)) {
          node.append(svg("path", { d: "M12 12 L28 12 L20 30 Z", fill: "#ffffff", stroke: dark,
            "stroke-width": 1.5 }));
          words += " (root)";
        }
        if (char !== char.toLowerCase()) {
          node.append(leafShape(leafFill, dark));
          if (lit) {
            node.append(svg("circle", { cx: 31, cy: 9, r: 6, fill: "#ffd54f", stroke: "#8a5300",
              "stroke-width": 1.5 }));
            words += ", lit (it gathers sun)";
          }
        }
      }
      if (name === layout.top) {
        node.append(svg("rect", { x: 3, y: 3, width: SIZE - 6, height: SIZE - 6, fill: "none",
          stroke: "#b8860b", "stroke-width": 2, "stroke-dasharray": "4 3" }));
        words += " (the top)";
      }
      node.append(svg("title", {}, name + ": " + words + changeWords(name, index)));
    }

    function changesOf(index) {
      const changes = index > 0 ? frames[index].changes : null;
      const marks = new Map();
      const add = (name, kind) => {
        if (!marks.has(name)) marks.set(name, []);
        if (!marks.get(name).includes(kind)) marks.get(name).push(kind);
      };
      if (changes) {
        for (const action of changes.actions) add(action.cell, action.kind);
        for (const kind of ["grafted", "withered", "shed", "cleared"]) {
          for (const name of changes[kind]) add(name, kind);
        }
      }
      return marks;
    }

    const CHANGE_WORDS = {
      creep: "crept into", leaf: "leaf put out", choke: "choked", grafted: "grafted",
      withered: "withered", shed: "shed at Decay", cleared: "deadwood cleared",
    };
    let currentMarks = new Map();

    function changeWords(name, index) {
      const kinds = currentMarks.get(name);
      return kinds ? " — this turn: " + kinds.map((kind) => CHANGE_WORDS[kind]).join(", ") : "";
    }

    function mark(kind) {
      // A white halo under each mark keeps it visible on dark vines and deadwood alike.
      const shape = markShape(kind);
      const halo = shape.cloneNode(false);
      halo.setAttribute("stroke", "#ffffff");
      halo.setAttribute("stroke-width", String(Number(shape.getAttribute("stroke-width")) + 3));
      halo.removeAttribute("stroke-dasharray");
      return svg("g", { "data-mark": kind }, halo, shape);
    }

    function markShape(kind) {
      const stroke = INK[kind];
      switch (kind) {
        case "creep":
          return svg("rect", { x: 3, y: 3, width: SIZE - 6, height: SIZE - 6, fill: "none", stroke,
            "stroke-width": 4 });
        case "leaf":
          return svg("circle", { cx: 20, cy: 20, r: 15, fill: "none", stroke, "stroke-width": 3,
            "stroke-dasharray": "5 3" });
        case "choke":
          return svg("path", { d: "M6 6 L34 34 M6 34 L34 6", stroke, "stroke-width": 5,
            "stroke-linecap": "round" });
        case "grafted":
          return svg("rect", { x: 2, y: 2, width: SIZE - 4, height: SIZE - 4, fill: "none", stroke,
            "stroke-width": 3, "stroke-dasharray": "7 3" });
        case "withered":
          return svg("rect", { x: 4, y: 4, width: SIZE - 8, height: SIZE - 8, fill: "none", stroke,
            "stroke-width": 2.5, "stroke-dasharray": "2 3" });
        case "shed":
          return svg("path", { d: "M12 12 L28 28 M12 28 L28 12", stroke, "stroke-width": 2.5,
            "stroke-dasharray": "3 2" });
        default:
          return svg("rect", { x: 5, y: 5, width: SIZE - 10, height: SIZE - 10, fill: "none", stroke,
            "stroke-width": 2.5, "stroke-dasharray": "5 3" });
      }
    }

    function count(state, chars) {
      let total = 0;
      for (const char of state.cells) if (chars.includes(char)) total += 1;
      return total;
    }

    return {
      draw(index) {
        const frame = frames[index];
        const state = frame.state;
        const lit = new Set(state.lit);
        currentMarks = changesOf(index);
        layout.cells.forEach(([name], cell) => {
          drawCell(cellNodes.get(name), name, state.cells[cell], lit.has(name), index);
        });
        marksLayer.replaceChildren();
        for (const [name, kinds] of currentMarks) {
          const node = cellNodes.get(name);
          node.setAttribute("data-change", kinds.join(" "));
          const group = svg("g", { transform: node.getAttribute("transform") });
          for (const kind of kinds) group.append(mark(kind));
          marksLayer.append(group);
        }
        drawing.setAttribute("data-turn", String(state.turn));
        drawing.setAttribute("data-to-move", state.toMove === 0 ? "g" : "p");
        drawing.setAttribute("data-sun", state.sun.join(" "));
        summary.textContent = "The house before turn " + state.turn + ". Green: " +
          count(state, "gG") + " vine cells, " + count(state, "G") + " leaves, " +
          state.sun[0] + " sun. Purple: " + count(state, "pP") + " vine cells, " +
          count(state, "P") + " leaves, " + state.sun[1] + " sun. Withering: " +
          count(state, "wW") + ". Deadwood: " + count(state, "12") + ".";
      },
      detail(index) {
        const changes = frames[index].changes;
        const lines = [["Feed: +" + changes.feed + " sun"]];
        for (const action of changes.actions) {
          const what = { creep: "Creep into ", leaf: "Leaf on ", choke: "Choke " }[action.kind];
          lines.push([what + action.cell + (action.cost ? " (" + action.cost + " sun)" : " (free)")]);
        }
        if (!changes.actions.length) lines.push(["Pass: no action"]);
        const effects = {
          grafted: "Grafted", withered: "Withering now", shed: "Shed at Decay", cleared: "Deadwood cleared",
        };
        for (const [kind, words] of Object.entries(effects)) {
          if (changes[kind].length) lines.push([words + ": " + changes[kind].join(", ")]);
        }
        const winner = frames[index].state.winnerAtFeed;
        if (winner !== null) lines.push([seatsInfo[winner].name + " holds a living leaf on the top"]);
        return lines;
      },
      seatFigures(index, seat) {
        const state = frames[index].state;
        return ["sun " + state.sun[seat] + " (+" + state.income[seat] + " at Feed)"];
      },
      legend() {
        const sample = (draw) => {
          const icon = svg("svg", { viewBox: "0 0 40 40", "aria-hidden": "true" });
          draw(icon);
          return icon;
        };
        const cell = (char, lit) => sample((icon) => {
          const node = svg("g", {});
          icon.append(svg("rect", { x: 0, y: 0, width: 40, height: 40, fill: "#f3ede0" }), node);
          const saved = currentMarks;
          currentMarks = new Map();
          drawCell(node, "", char, lit, 0);
          currentMarks = saved;
        });
        const marked = (kind) => sample((icon) => {
          icon.append(svg("rect", { x: 0, y: 0, width: 40, height: 40, fill: "#f3ede0" }), mark(kind));
        });
        return [
          { swatch: cell("g", false), text: "Green vine" },
          { swatch: cell("P", true), text: "Purple leaf, lit (gathers sun)" },
          { swatch: cell("W", false), text: "Withering vine with a leaf" },
          { swatch: cell("2", false), text: "Deadwood (marker 2 or 1)" },
          { swatch: cell("#", false), text: "Glass" },
          { swatch: marked("creep"), text: "Crept into this turn" },
          { swatch: marked("leaf"), text: "Leaf put out this turn" },
          { swatch: marked("choke"), text: "Choked this turn" },
          { swatch: marked("grafted"), text: "Grafted this turn" },
          { swatch: marked("withered"), text: "Began to wither this turn" },
          { swatch: marked("shed"), text: "Shed at Decay this turn" },
          { swatch: marked("cleared"), text: "Deadwood cleared this turn" },
        ];
      },
    };
  },
};
