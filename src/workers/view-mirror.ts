// A worker's copy of the fleet: the node views the owner last pushed, with each limited router's
// room (its switch state and the models with a request in flight). The request path reads it for
// what it decides on its own (prompt sizing, refusal wording, whether a failover has somewhere to
// go, /v1/models, /health). Live lease counts are not mirrored beyond the routers' busy models:
// admission is the owner's alone, so the snapshot shows every other node idle, and nothing here
// ever admits a request.

import type { Usage } from '#src/capacity/index.ts';
import { ModelOffers, type NodeView, type RoutingSnapshot } from '#src/nodes/index.ts';
import type { RouterSwitchView } from '#src/routing/index.ts';
import { switchViewOf, type RouterRoom } from '#src/routing/index.ts';
import type { FleetView } from '#src/ports/index.ts';
import type { ChangedView, LearnedChange, ViewsUpdate } from './protocol.ts';

const IDLE: Usage = Object.freeze({ requests: 0, tokens: 0 });
const BUSY: Usage = Object.freeze({ requests: 1, tokens: 0 });

export class ViewMirror implements FleetView {
  #fleet: ViewsUpdate;
  #byName: ReadonlyMap<string, NodeView>;
  #rooms: ReadonlyMap<string, RouterRoom>;
  readonly #now: () => number;
  readonly #offers = new ModelOffers();

  constructor(fleet: ViewsUpdate, now: () => number) {
    this.#fleet = fleet;
    this.#byName = byName(fleet.views);
    this.#rooms = roomsOf(fleet.rooms);
    this.#now = now;
  }

  update(fleet: ViewsUpdate): void {
    this.#fleet = fleet;
    this.#byName = byName(fleet.views);
    this.#rooms = roomsOf(fleet.rooms);
  }

  /** Some nodes' views changed (the same nodes, in the same order): each replaces the view at its index. */
  replaceViews(changed: readonly ChangedView[], rooms: readonly RouterRoom[]): void {
    const views = [...this.#fleet.views];
    const byName = new Map(this.#byName);
    for (const [index, change] of changed) {
      const before = views[index];
      const name = 'spec' in change ? change.spec.name : change.node;
      // The owner sends a change only against the views it last pushed, in order, on one channel.
      if (before === undefined || before.spec.name !== name)
        throw new Error(`a changed view for ${name} at ${index} does not match the mirror (${before?.spec.name ?? 'none'})`);
      const view = 'spec' in change ? change : withLearned(before, change);
      views[index] = view;
      byName.set(view.spec.name, view);
    }
    this.#fleet = { ...this.#fleet, views, rooms };
    this.#byName = byName;
    this.#rooms = roomsOf(rooms);
  }

  /** The limited routers' rooms alone changed. */
  updateRooms(rooms: readonly RouterRoom[]): void {
    this.#fleet = { ...this.#fleet, rooms };
    this.#rooms = roomsOf(rooms);
  }

  views(): readonly NodeView[] {
    return this.#fleet.views;
  }

  /** The views that may serve `model`, from the views last pushed. */
  offering(model: string): readonly NodeView[] {
    return this.#offers.of(this.#fleet.views, model);
  }

  /** The same views: the owner pushes them whenever a routing-relevant figure changes. */
  freshViews(): readonly NodeView[] {
    return this.#fleet.views;
  }

  view(name: string): NodeView | undefined {
    return this.#byName.get(name);
  }

  /** A limited router's switch state as the owner's scheduler last pushed it. */
  switchView(node: string): RouterSwitchView {
    return switchViewOf(this.#rooms.get(node));
  }

  snapshot(): RoutingSnapshot {
    const rooms = this.#rooms;
    return {
      nodes: this.#fleet.views,
      now: this.#now(),
      inFlight: () => 0,
      usage: (node, model) => (rooms.get(node)?.busy.includes(model) === true ? BUSY : IDLE),
      connectionLimit: this.#fleet.connectionLimit,
    };
  }
}

/** The view held, with the node's learned figures as they are now: every other field stays the same object. */
function withLearned(view: NodeView, learned: LearnedChange): NodeView {
  const { tokenRatios: _ratios, decodeRates: _rates, ...rest } = view;
  return Object.freeze({
    ...rest,
    ...(learned.tokenRatios === undefined ? {} : { tokenRatios: learned.tokenRatios }),
    ...(learned.decodeRates === undefined ? {} : { decodeRates: learned.decodeRates }),
  });
}

function byName(views: readonly NodeView[]): ReadonlyMap<string, NodeView> {
  return new Map(views.map((v) => [v.spec.name, v]));
}

function roomsOf(rooms: readonly RouterRoom[]): ReadonlyMap<string, RouterRoom> {
  return new Map(rooms.map((r) => [r.node, r]));
}
