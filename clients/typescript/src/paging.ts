/** Paged listings: await one page, or iterate over every item of every page. */

/**
 * A listing call: `await` it for its first page (as the server sends it), iterate it with
 * `for await` for every item of every page (each page fetched when the previous one is used up),
 * or call {@link pages} for the pages themselves. Each iteration starts again from the first page.
 */
export class Paged<Item, Page> implements Promise<Page>, AsyncIterable<Item> {
  readonly [Symbol.toStringTag] = "Paged";
  private first: Promise<Page> | undefined;

  /**
   * @param fetchPage fetches the page after `after` (null: the first page).
   * @param itemsOf the items of a page.
   * @param nextOf where the next page starts, or null after the last one.
   */
  constructor(
    private readonly fetchPage: (after: unknown) => Promise<Page>,
    private readonly itemsOf: (page: Page) => readonly Item[],
    private readonly nextOf: (page: Page, after: unknown) => unknown,
  ) {}

  then<A = Page, B = never>(
    onFulfilled?: ((page: Page) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    this.first ??= this.fetchPage(null);
    return this.first.then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page | B> {
    return this.then(undefined, onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<Page> {
    return this.then().finally(onFinally);
  }

  /** Every page, in order. */
  async *pages(): AsyncGenerator<Page, void, undefined> {
    let after: unknown = null;
    for (;;) {
      const page = await this.fetchPage(after);
      yield page;
      const next = this.nextOf(page, after);
      if (next === null || next === undefined) return;
      after = next;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) yield* this.itemsOf(page);
  }
}

/** A page of ids: the shape of every id listing (sessions, conversations, scopes, namespaces, boards). */
export interface CursorPage<Item> {
  items: Item[];
  next_cursor?: string | null;
}
