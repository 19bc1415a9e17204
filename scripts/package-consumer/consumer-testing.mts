// express-service-accounts/testing is ESM only: its types, from an ES module.
import { describeAccountStore, type AccountStoreFixture } from 'express-service-accounts/testing';
import { MemoryAccountStore } from 'express-service-accounts';

const makeStore = async (): Promise<AccountStoreFixture> => ({ store: new MemoryAccountStore(), cleanup: async () => {} });
describeAccountStore('MemoryAccountStore', makeStore);
